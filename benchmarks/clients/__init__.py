"""The benchmark clients: each module is a script run by the interpreter of the driver it
measures (``.venvs/<peer>/bin/python benchmarks/clients/patterns.py ...``, turbocql's with
the suite's own). They import one another as modules of this package
(``from benchmarks.clients.sync_threads import ...``), each script first putting the
checkout's root on ``sys.path``, and import their driver only when run.
"""
