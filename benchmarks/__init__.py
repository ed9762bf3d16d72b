"""The benchmark suite (benchmarks/README.md): the runners, the report and what they share.

Each module is a script (``python benchmarks/run_sync.py ...``) and a module of this package,
importable from the checkout's root (``from benchmarks import common``): the modules import
one another that way, and a script first puts the checkout's root on ``sys.path``. The
runner of the whole suite (``python -m benchmarks.runner``), the tests (``tests/unit/
test_bench_*.py``) and the runners themselves all see the same modules. ``clients/`` are the
processes measured, run by each driver's own interpreter; ``harness/`` is what the tests
share with the benchmarks. Nothing here imports turbocql at import time.
"""
