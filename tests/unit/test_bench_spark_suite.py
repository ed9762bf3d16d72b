"""`turbocql bench`'s optional `spark` scenario: registered, but not in `all`."""

from benchmarks import runner as bench
from benchmarks.runner import cli, discover


def test_spark_is_an_optional_scenario():
    assert "spark" in bench.SCENARIOS and "spark" in bench.OPTIONAL_SCENARIOS
    assert set(discover.OPTIONAL_SCENARIOS) <= set(discover.SCENARIOS)


def test_spark_rows_option():
    import argparse

    p = argparse.ArgumentParser()
    cli.add_parser(p.add_subparsers())
    args = p.parse_args(["bench", "--scenarios", "spark", "--spark-rows", "2000"])
    assert args.spark_rows == 2000 and args.scenarios == "spark"
    assert p.parse_args(["bench"]).spark_rows is None
