"""benchmarks/run_flamegraph.py: folded stacks summed by thread, leaf and GIL wait (no perf)."""

from benchmarks import run_flamegraph

FOLDED = "\n".join(
    [
        "python;_PyEval_EvalFrameDefault;take_gil;__x64_sys_futex_[k] 3000",
        "python;_PyEval_EvalFrameDefault;_engine::api::execute::SyncExecute::__call__ 2000",
        "python;_PyEval_EvalFrameDefault 1000",
        "turbocql-io;tokio::runtime::io::driver::Driver::turn;epoll_wait;do_epoll_wait_[k] 4000",
        "turbocql-io;_mi_page_malloc 500",
        "turbocql-io;__libc_send 500",
    ]
)


def test_samples_are_summed_by_thread_leaf_and_gil_wait():
    s = run_flamegraph.summarize(FOLDED + "\n")
    assert s["cpu_ns"] == 11000
    assert s["by_thread"] == {"python": 6000, "turbocql-io": 5000}
    assert s["by_leaf"] == {
        "kernel": 7000,
        "engine (Rust)": 2000,
        "CPython": 1000,
        "allocator": 500,
        "other user code": 500,
    }
    assert s["under_take_gil"] == 3000


def test_the_table_gives_each_run_its_shares():
    run = {"name": "turbocql-write-1thread", "client_result": {"ops_per_s": 2000.0, "cpu_us_per_op": 80.25}}
    run.update(run_flamegraph.summarize(FOLDED))
    text = run_flamegraph.markdown([run])
    row = text.splitlines()[2]
    assert row.startswith("| turbocql-write-1thread | 2000 | 80.2 | 0.00 | 27% | 64% | 18% | 5% | 9% | 5% |")
    assert "python 55%, turbocql-io 45%" in text
    failed = {"name": "x", "client_result": {"failed": "exit 1"}, **run_flamegraph.summarize("")}
    assert "| x | exit 1 | - | 0.00 | - |" in run_flamegraph.markdown([failed])
