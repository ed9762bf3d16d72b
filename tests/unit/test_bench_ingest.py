"""The `ingest` benchmark scenario (document 003) without a server: the generated data, the
client's counting of records and errors on fake sessions, the runner's table and answer,
the report's section and plot, and the scenario's wiring into `turbocql bench`."""

import argparse
import asyncio
import re
from pathlib import Path

import pytest

from benchmarks import common, peers, run_ingest
from benchmarks import runner as bench
from benchmarks.clients import ingest
from benchmarks.runner import discover

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

# ------------------------------------------------------------------------------------ data


def test_dictionary_is_deterministic_and_shaped_like_sf1():
    d = ingest.dictionary()
    assert d == ingest.dictionary() and d != ingest.dictionary(seed=1)
    assert len(d) == ingest.SEGMENTS == 40
    assert all(ingest.KEYS_MIN <= len(keys) <= ingest.KEYS_MAX for keys in d)
    assert d[0][0] == "P0010001" and d[39][-1] == "P040%04d" % len(d[39])
    assert all(re.fullmatch(r"P\d{7}", k) for keys in d for k in keys)
    rows = ingest.dictionary_rows()
    assert len(rows) == sum(map(len, d)) and rows[0] == (1, 0, "P0010001")
    assert len({(s, p) for s, p, _ in rows}) == len(rows)  # one row per (segment, position)


def test_geo_rows_are_deterministic_with_the_tables_columns():
    rows = ingest.geo_rows(50)
    assert rows == ingest.geo_rows(50)
    assert [r[0] for r in rows] == list(range(1, 51))
    assert all(len(r) == len(ingest.GEO_COLUMNS) for r in rows)
    cols = dict(zip(ingest.GEO_COLUMNS, rows[7], strict=True))
    assert cols["state"] == "36" and cols["stusab"] == "NY"
    assert re.fullmatch(r"\d{3}", cols["county"]) and int(cols["county"]) % 2 == 1
    assert isinstance(cols["pop100"], int) and isinstance(cols["hu100"], int)
    assert ingest.INSERT_GEO.count("?") == len(ingest.GEO_COLUMNS)


def test_geo_count_scales_with_the_records():
    assert ingest.geo_count(1_440_000) == 57_600  # + 1.44M = about the document's 1.5M rows
    assert ingest.geo_count(20_000) == 1000  # at least 1,000


def test_element_chunks_hold_exactly_the_records_one_value_per_key():
    sizes = [len(k) for k in ingest.dictionary()]
    chunks = ingest.element_chunks(20_000, 1000)
    assert chunks == ingest.element_chunks(20_000, 1000)
    assert sum(len(v) for _, _, v in chunks) == 20_000
    for i, (logrecno, segment, values) in enumerate(chunks):
        assert segment == 1 + i % 40 and logrecno == 1 + (i // 40) % 1000
        if i < len(chunks) - 1:
            assert len(values) == sizes[segment - 1]  # about 200: one per dictionary key
    assert 0 < len(chunks[-1][2]) <= sizes[chunks[-1][1] - 1]  # the last one cut
    assert all(0 <= v < 100_000 for _, _, vs in chunks for v in vs)
    # Few geo records: the lines wrap around them, always naming an existing one.
    assert {lr for lr, _, _ in ingest.element_chunks(9000, 1)} == {1}


def test_phase_result_and_totals():
    p = ingest.phase_result(1000, 1010, 2, 0.5, 0.3, 0.1, 0.6)
    assert p["records_per_s"] == 2000.0 and p["cpu_us_per_record"] == 400.0
    assert p["user_share"] == 0.75 and p["system_share"] == 0.25 and p["cpu_cores"] == 0.8
    assert p["server_cpu_us_per_record"] == 600.0 and p["server_cores"] == 1.2
    q = ingest.phase_result(3000, 3000, 0, 1.5, 0.9, 0.3, None)
    assert "server_cores" not in q
    t = ingest.totals({"geo": p, "elements": ingest.phase_result(3000, 3000, 0, 1.5, 0.9, 0.3, 1.0)})
    assert t["records_total"] == 4000 and t["errors"] == 2 and t["seconds"] == 2.0
    assert t["cpu_us_per_record"] == 400.0 and t["cpu_cores"] == 0.8 and t["server_cores"] == 0.8
    assert "server_cores" not in ingest.totals({"geo": p, "elements": q})  # one phase lacks it
    assert ingest.chunk_requests([(1, 1, [5, 6]), (2, 2, [7])]) == 2 + 2 + 2 + 1


def test_chunk_problem():
    assert ingest.chunk_problem((1, 2, [1, 2]), ["a", "b", "c"], ("row",)) is None
    assert "no geo row 1" in ingest.chunk_problem((1, 2, [1]), ["a"], None)
    assert "1 dictionary keys for 2 values" in ingest.chunk_problem((1, 2, [1, 2]), ["a"], ("row",))


# ------------------------------------------------------------------------------------ models on fakes


class FakeResult(list):
    def one(self):
        return self[0] if self else None


class FakeSession:
    """Answers the dictionary and geo SELECTs; INSERTs whose value is in ``fail`` raise."""

    def __init__(self, fail=(), missing_geo=()):
        self.fail, self.missing_geo = set(fail), set(missing_geo)
        self.inserted = []

    def execute(self, stmt, params):
        if stmt == "select_dictionary":
            return FakeResult((k,) for k in ingest.dictionary()[params[0] - 1])
        if stmt == "select_geo":
            return FakeResult([] if params[0] in self.missing_geo else [(params[0], "name")])
        if stmt == "insert_element" and params[3] in self.fail:
            raise RuntimeError(f"write timeout {params[3]}")
        self.inserted.append(params)
        return FakeResult()


STMTS = {k: k for k in ingest.STATEMENTS}


@pytest.mark.parametrize("pool", [1, 4])
def test_threads_count_records_and_every_error(pool):
    chunks = ingest.element_chunks(12_000, 1000)  # geo records 1 (40 chunks) and 2 (the rest)
    fail = {chunks[0][2][3], chunks[2][2][0]}
    session = FakeSession(fail=fail, missing_geo={2})
    errors = ingest.Errors()
    _, chunk = ingest.sync_work(session, STMTS, errors)
    r = ingest.run_pool("threads", pool, chunks, chunk, ingest.Meter(None), ingest.chunk_requests(chunks))
    missing = [c for c in chunks if c[0] == 2]
    bad_values = sum(1 for c in chunks if c[0] == 1 for v in c[2] if v in fail)
    assert len(missing) == len(chunks) - 40 and bad_values >= 2
    assert r["errors"] == len(missing) + bad_values
    assert r["records"] == 12_000 - sum(len(c[2]) for c in missing) - bad_values == len(session.inserted)
    assert r["requests"] == ingest.chunk_requests(chunks)
    assert errors.first is not None


def test_geo_work_counts_failures():
    class Failing:
        def execute(self, stmt, params):
            raise ValueError("no")

    errors = ingest.Errors()
    geo, _ = ingest.sync_work(Failing(), STMTS, errors)
    r = ingest.run_pool("threads", 3, ingest.geo_rows(10), geo, ingest.Meter(None), 10)
    assert (r["records"], r["errors"]) == (0, 10) and errors.first == "ValueError: no"
    with pytest.raises(RuntimeError, match="every warm-up request failed"):
        ingest.check_warmup(r, r)


def test_async_pool_runs_every_item_once():
    seen = []

    async def work(item):
        await asyncio.sleep(0)
        seen.append(item)
        return (1, 0) if item % 7 else (0, 1)

    r = asyncio.run(ingest.async_pool(5, list(range(100)), work, ingest.Meter(None), 100))
    assert sorted(seen) == list(range(100))
    assert (r["records"], r["errors"]) == (85, 15)


def test_bulk_chunks_streams_selects_into_the_inserts_and_counts_errors():
    chunks = ingest.element_chunks(12_000, 1000)
    session = FakeSession(fail={chunks[0][2][0]}, missing_geo={2})

    class FakeConcurrent:
        @staticmethod
        def execute_concurrent(sess, pairs, concurrency, raise_on_first_error, results_generator):
            assert results_generator and not raise_on_first_error and concurrency == 8
            for stmt, params in pairs:
                yield True, sess.execute(stmt, params)

        @staticmethod
        def execute_concurrent_with_args(sess, stmt, params, concurrency, raise_on_first_error):
            out = []
            for p in params:
                try:
                    out.append((True, sess.execute(stmt, p)))
                except RuntimeError as e:
                    out.append((False, e))
            return out

    errors = ingest.Errors()
    r = ingest.bulk_chunks(session, FakeConcurrent, STMTS, chunks, 8, ingest.Meter(None), errors)
    missing = [c for c in chunks if c[0] == 2]
    bad_values = sum(1 for c in chunks if c[0] == 1 for v in c[2] if v == chunks[0][2][0])
    assert r["errors"] == len(missing) + bad_values
    assert r["records"] == 12_000 - sum(len(c[2]) for c in missing) - bad_values == len(session.inserted)
    assert errors.first is not None


def test_the_client_refuses_a_model_its_driver_lacks(capsys):
    assert ingest.main(["--driver", "acsylla", "--model", "threads", "--records", "10"]) == ingest.EXIT_NO_MODEL
    assert "acsylla has no threads model" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ runner


def _run(client, model, pool, geo, elements, cores, server=None, errors=0, user=0.8):
    def phase(rate):
        return {"records_per_s": rate, "errors": 0}

    r = {
        "client": client,
        "model": model,
        "pool": pool,
        "records": 1000,
        "phases": {"geo": phase(geo), "elements": phase(elements)},
        "cpu_us_per_record": 50.0,
        "cpu_cores": cores,
        "user_share": user,
        "system_share": round(1 - user, 3),
        "errors": errors,
    }
    if errors:
        r["phases"]["elements"]["errors"] = errors
    if server is not None:
        r["server_cores"] = server
    return r


CANNED = [
    _run("classic", "threads", 15, 5000, 9000, 0.98, 0.9),
    _run("classic", "threads", 150, 5200, 9500, 1.01, 0.95),
    {"client": "classic", "model": "gevent", "pool": 15, "unavailable": "pip install gevent failed | x"},
    {"client": "classic", "model": "gevent", "pool": 150, "unavailable": "pip install gevent failed | x"},
    _run("turbocql", "threads", 15, 20000, 30000, 0.6, 1.3),
    _run("turbocql", "bulk", 15, 40000, 60000, 0.4, 1.5, errors=3),
    {"client": "turbocql", "model": "bulk", "pool": 150, "failed": "timed out after 600 s"},
    _run("turbocql", "asyncio", 150, 45000, 31000, 0.7, 1.2),
    _run("acsylla", "asyncio", 15, 18000, 25000, 0.5, 1.0),
]


def test_markdown_table_in_the_documents_shape():
    md = run_ingest.markdown(CANNED, [15, 150], 1000, cpus=2)
    assert "1,000 geo records (phase 1), then 1,000 element records" in md
    head = next(ln for ln in md.splitlines() if ln.startswith("| driver"))
    assert head.count("15: ") == 4 and head.count("150: ") == 4
    assert "| classic driver | threads | 5,000 | 9,000 | 50.0 | 0.98, 80/20 | 5,200 | 9,500 |" in md
    assert "| classic driver | gevent | not available: pip install gevent failed / x |" in md
    assert "| 40,000 | 60,000 (3 errors) |" in md  # a run with errors is marked
    assert "failed: timed out after 600 s" in md
    lines = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert [ln.split(" | ")[:2] for ln in lines[2:]] == [
        ["| classic driver", "threads"],
        ["| classic driver", "gevent"],
        ["| turbocql", "threads"],
        ["| turbocql", "asyncio"],
        ["| acsylla", "asyncio"],
        ["| turbocql", "bulk"],
    ]  # the rows in the runner's order, whatever the order of the results
    assert "**Answer**" in md


def test_answer_says_which_client_was_cpu_bound_and_which_model_was_fastest():
    text = run_ingest.answer(CANNED, cpus=2)
    classic = next(ln for ln in text.splitlines() if "**classic driver**" in ln)
    assert "CPU-bound in every run (0.98–1.01 cores)" in classic
    assert "Fastest model: **threads** (pool 150: 9,500 element records/s" in classic
    assert "filled the machine's 2 CPUs in 2 of 2 runs" in classic
    turbo = next(ln for ln in text.splitlines() if "**turbocql**" in ln)
    assert "not CPU-bound (0.40–0.70 cores)" in turbo
    assert "Fastest model: **bulk** (pool 15: 60,000" in turbo
    assert "for the geo inserts asyncio (pool 150: 45,000/s)" in turbo
    assert "3 failed requests" in turbo
    acs = next(ln for ln in text.splitlines() if "**acsylla**" in ln)
    assert "not CPU-bound (0.50 cores)" in acs and "**asyncio**" in acs
    assert "Fastest run: turbocql bulk at pool 15, 60,000 element records/s." in text
    mixed = run_ingest.answer([CANNED[0], _run("classic", "gevent", 15, 1, 2, 0.5)])
    assert "CPU-bound in 1 of 2 runs (0.50–0.98 cores)" in mixed
    assert run_ingest.answer([CANNED[2], CANNED[6]]) == "**Answer:** no run succeeded."


def test_runner_options_and_rows():
    assert run_ingest.parse_pools("15, 150,350") == [15, 150, 350]
    with pytest.raises(ValueError):
        run_ingest.parse_pools("15,0")
    assert run_ingest.parse_list("turbocql,classic,turbocql", run_ingest.CLIENTS, "client") == ["turbocql", "classic"]
    with pytest.raises(ValueError, match="unknown model 'trio'"):
        run_ingest.parse_list("trio", run_ingest.MODELS, "model")
    assert run_ingest.interpreter_of("classic", "gevent") == "gevent"
    assert run_ingest.interpreter_of("classic", "threads") == "classic"
    assert {m for _, m in run_ingest.ROWS} == set(run_ingest.MODELS)
    for client, model in run_ingest.ROWS:
        assert model in ingest.MODELS[run_ingest.DRIVER_ARG[client]]
    gevent = peers.PEERS["gevent"]
    assert gevent.driver == "cassandra" and gevent.requirements[0] == "cassandra-driver==3.30.1"


def test_listen_inodes_matches_the_address_not_only_the_port():
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
        "   0: 0B00007F:2352 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1\n"
        "   1: 0100007F:2352 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1\n"
        "   2: 0100007F:2353 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 333 1\n"
        "   3: 0100007F:2352 0100007F:9999 01 00000000:00000000 00:00000000 00000000     0        0 444 1\n"
        "   4: 00000000:2354 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1\n"
    )
    assert common.listen_inodes([table], "127.0.0.1", 9042) == {"socket:[222]"}
    assert common.listen_inodes([table], "127.0.0.11", 9042) == {"socket:[111]"}
    assert common.listen_inodes([table], "127.0.0.1", 9044) == {"socket:[555]"}  # every address


# ------------------------------------------------------------------------------------ report, bench


def test_report_has_the_ingest_section_and_plot(tmp_path):
    from benchmarks import report

    scen = {"ingest": {"heading": "Ingestion.", "meta": {"pools": [15, 150], "records": 1000}, "results": CANNED}}
    md = report.build_markdown({"meta": {}, "machine": {}, "server": {}, "scenarios": scen})
    assert "## Document 003: ingestion" in md and "| classic driver | threads | 5,000 |" in md
    pytest.importorskip("matplotlib")
    assert report.plot_ingest(scen, tmp_path / "i.png") and (tmp_path / "i.png").stat().st_size > 0
    assert not report.plot_ingest({}, tmp_path / "none.png")


def test_bench_lists_the_scenario_and_its_option():
    assert "ingest" in discover.SCENARIOS and "run_ingest.py" in discover.REQUIRED_FILES
    mods = discover._import_runners(BENCH)
    assert mods["run_ingest"].main is run_ingest.main
    parser = argparse.ArgumentParser(prog="turbocql")
    bench.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", "--scenarios", "ingest", "--ingest-records", "5000", "--ingest-pools", "15"])
    assert args.ingest_records == 5000 and args.ingest_pools == "15"
