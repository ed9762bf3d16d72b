"""What the tests and the benchmarks share, imported by both as a package from the checkout's
root: ``reliability``, the figures of the reliability matrix that the fault tests
(``tests/integration``) and the network and soak runs (``run_network.py``, ``run_soak.py``)
record for ``benchmarks/reliability.py``.
"""
