"""scripts/relaxed_check.py: every Ordering::Relaxed of the engine carries its reason."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import relaxed_check  # noqa: E402


def test_the_engine_has_no_unexplained_relaxed():
    assert relaxed_check.unexplained(ROOT / "src") == []


def test_a_relaxed_without_a_comment_is_found_and_one_with_a_comment_near_is_not(tmp_path):
    (tmp_path / "a.rs").write_text(
        "fn f(x: &AtomicU64) -> u64 {\n"
        "    // Relaxed: a figure to report.\n"
        "    x.load(Ordering::Relaxed)\n"
        "}\n" + "// filler\n" * relaxed_check.REACH + "fn g(x: &AtomicU64) -> u64 {\n"
        "    x.load(Ordering::Relaxed) // SeqCst elsewhere\n"
        "}\n"
    )
    found = relaxed_check.unexplained(tmp_path)
    assert len(found) == 1 and found[0].endswith(
        ":%d: x.load(Ordering::Relaxed) // SeqCst elsewhere" % (6 + relaxed_check.REACH)
    ), found
    assert relaxed_check.main(["relaxed_check", str(tmp_path)]) == 1
