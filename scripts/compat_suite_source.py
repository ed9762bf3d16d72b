"""Step 1 of the compat suite (``compat_suite.py``): the classic driver's tests (only their
``tests/`` directory), from the cache, a local clone or checkout (``--source``), a ``git clone``
from GitHub, or the sdist from PyPI (which holds none: recorded); none of their files modified.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from compat_suite_config import CLASSIC_VERSION, REPO_URL, TAGS, run


def _from_git_dir(git_dir: str, dest: Path) -> dict:
    """Export tests/ of a clone (bare or not) at its 3.30.x tag, else HEAD."""
    ref, note = "HEAD", "no 3.30.x tag in the clone: its default branch"
    for tag in TAGS:
        if (
            run(["git", "--git-dir", git_dir, "rev-parse", "-q", "--verify", "refs/tags/%s^{commit}" % tag]).returncode
            == 0
        ):
            ref, note = tag, "tag %s" % tag
            break
    commit = run(["git", "--git-dir", git_dir, "rev-parse", ref + "^{commit}"], check=True).stdout.strip()
    date = run(["git", "--git-dir", git_dir, "show", "-s", "--format=%cI", commit], check=True).stdout.strip()
    version = run(["git", "--git-dir", git_dir, "show", "%s:cassandra/__init__.py" % commit]).stdout
    m = re.search(r"__version_info__ = \(([^)]*)\)", version)
    tmp = Path(tempfile.mkdtemp(prefix="pydriver-", dir=dest.parent))
    archive = run(["git", "--git-dir", git_dir, "archive", "--format=tar", "-o", str(tmp / "t.tar"), commit, "tests"])
    if archive.returncode:
        raise RuntimeError("git archive failed: %s" % archive.stderr.strip())
    with tarfile.open(tmp / "t.tar") as tar:
        tar.extractall(tmp / "out", filter="data")
    if dest.exists():
        shutil.rmtree(dest)
    (tmp / "out").rename(dest)
    shutil.rmtree(tmp)
    return {
        "ref": ref,
        "commit": commit,
        "commit_date": date,
        "note": note,
        "source_version": m.group(1).replace(", ", ".") if m else "?",
    }


def _git_dir_of(path: str) -> str | None:
    p = Path(path)
    for cand in (p / ".git", p):
        if run(["git", "--git-dir", str(cand), "rev-parse", "--git-dir"]).returncode == 0:
            return str(cand)
    return None


def obtain_tests(dest: Path, source: str | None) -> dict:
    """Put the classic driver's tests/ in dest; return where they came from (and attempts)."""
    attempts = []
    marker = dest / "compat_suite_source.json"
    if (dest / "tests" / "integration" / "standard").is_dir() and marker.is_file() and not source:
        info = json.loads(marker.read_text())
        info["attempts"] = ["cache: %s already holds the tests" % dest]
        return info
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = dest.parent / (dest.name + ".new")
    if work.exists():
        shutil.rmtree(work)

    def done(info: dict) -> dict:
        info["attempts"] = attempts
        (work / "compat_suite_source.json").write_text(json.dumps(info, indent=2) + "\n")
        if dest.exists():
            shutil.rmtree(dest)
        work.rename(dest)
        return info

    if source:
        git_dir = _git_dir_of(source)
        if git_dir:
            info = _from_git_dir(git_dir, work)
            info["source"] = "local clone %s" % source
            attempts.append("--source %s: ok (%s)" % (source, info["note"]))
            return done(info)
        if (Path(source) / "tests" / "integration" / "standard").is_dir():
            shutil.copytree(Path(source) / "tests", work / "tests")
            attempts.append("--source %s: ok (a checkout, copied)" % source)
            return done({"source": "checkout %s" % source, "ref": "?", "commit": "?", "note": "a plain checkout"})
        attempts.append("--source %s: not a clone or checkout of python-driver" % source)

    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        for tag in (*TAGS, None):
            cmd = ["git", "clone", "-q", "--bare", "--depth", "1", REPO_URL, tmp + "/clone"]
            if tag:
                cmd[4:4] = ["--branch", tag]
            proc = run(cmd, timeout=300)
            if proc.returncode == 0:
                info = _from_git_dir(tmp + "/clone", work)
                info["source"] = REPO_URL
                attempts.append("git clone %s%s: ok" % (REPO_URL, " --branch " + tag if tag else ""))
                return done(info)
            attempts.append("git clone %s (%s): %s" % (REPO_URL, tag or "default branch", proc.stderr.strip()[-200:]))
            if "Could not resolve host" in proc.stderr or "unable to access" in proc.stderr:
                break  # no network route to the host: the other refs will not do better
            shutil.rmtree(tmp + "/clone", ignore_errors=True)

        # The sdist: pip download would build its metadata (Cython, a failing license
        # check); fetch the file pip resolves, without building, and look inside.
        proc = run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--no-build-isolation"]
            + ["-d", tmp, "-vv", "cassandra-driver==%s" % CLASSIC_VERSION],
            timeout=600,
        )
        urls = sorted(set(re.findall(r"https://\S+?cassandra_driver-%s\.tar\.gz" % CLASSIC_VERSION, proc.stdout)))
        sdist = next(Path(tmp).glob("cassandra_driver-*.tar.gz"), None)
        if sdist is None and urls:
            import urllib.request

            sdist = Path(tmp) / urls[0].rsplit("/", 1)[1]
            urllib.request.urlretrieve(urls[0], sdist)
        if sdist is None:
            attempts.append("pip sdist cassandra-driver==%s: not downloaded" % CLASSIC_VERSION)
        else:
            with tarfile.open(sdist) as tar:
                names = [n for n in tar.getnames() if "/tests/" in n]
            attempts.append(
                "pip sdist %s: %s" % (sdist.name, "%d test files" % len(names) if names else "holds NO tests/")
            )
            if any("/tests/integration/standard/" in n for n in names):
                with tarfile.open(sdist) as tar:
                    tar.extractall(Path(tmp) / "x", filter="data")
                top = next((Path(tmp) / "x").iterdir())
                shutil.copytree(top / "tests", work / "tests")
                return done({"source": "sdist %s" % sdist.name, "ref": CLASSIC_VERSION, "commit": "?", "note": ""})
    raise SystemExit(
        "compat_suite: could not obtain the classic driver's tests:\n  "
        + "\n  ".join(attempts)
        + "\nGive a clone of %s with --source PATH." % REPO_URL
    )
