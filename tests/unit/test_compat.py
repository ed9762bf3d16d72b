"""turbocql.compat: the `import cassandra` shim and its `python -m turbocql.compat` launcher.

Every test runs in a subprocess, so the import hook never leaks into the other tests. This
venv has the real classic driver (`cassandra-driver`) installed, so the tests pass
allow_shadow (or --allow-shadow) except where the refusal itself is tested.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import turbocql
from turbocql.compat import CLASSIC_API_VERSION

CHECKOUT = Path(__file__).resolve().parents[2]
PYTHON_SRC = CHECKOUT / "python"


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TURBOCQL_COMPAT")}
    env.update(extra)
    return env


def run_code(code, *args, env=None, cwd=None, launcher=False, launcher_args=()):
    """Run `code` in a fresh interpreter (through `python -m turbocql.compat -c` if launcher)."""
    code = textwrap.dedent(code)
    if launcher:
        cmd = [sys.executable, "-m", "turbocql.compat", *launcher_args, "-c", code, *args]
    else:
        cmd = [sys.executable, "-c", code, *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env or _env(), cwd=cwd, timeout=60)


def ok(proc):
    assert proc.returncode == 0, "exit %d\nstdout:\n%s\nstderr:\n%s" % (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def test_cassandra_modules_are_turbocqls_module_objects():
    out = ok(
        run_code(
            """
            import sys
            import turbocql.compat
            turbocql.compat.install(allow_shadow=True)
            import cassandra, cassandra.cluster, cassandra.query, cassandra.policies
            from cassandra.cluster import Cluster, Session
            from cassandra import ConsistencyLevel, InvalidRequest
            import turbocql, turbocql.cluster, turbocql.query, turbocql.policies
            # The top level is a thin module over turbocql (its own version attributes);
            # whatever else it holds is turbocql's, read and written.
            assert cassandra is not turbocql and cassandra.__path__ == turbocql.__path__
            assert cassandra.ConsistencyLevel is turbocql.ConsistencyLevel
            cassandra.some_classic_state = 7
            assert turbocql.some_classic_state == 7
            del cassandra.some_classic_state
            assert not hasattr(turbocql, "some_classic_state")
            assert set(dir(turbocql)) <= set(dir(cassandra))
            assert sys.modules["cassandra.cluster"] is sys.modules["turbocql.cluster"] is cassandra.cluster
            assert cassandra.query is turbocql.query and cassandra.policies is turbocql.policies
            assert Cluster is turbocql.cluster.Cluster and Session is turbocql.cluster.Session
            assert InvalidRequest is turbocql.InvalidRequest and ConsistencyLevel is turbocql.ConsistencyLevel
            # The modules keep their own names and specs (reload, pickling by reference).
            assert cassandra.cluster.__name__ == "turbocql.cluster"
            assert cassandra.cluster.__spec__.name == "turbocql.cluster"
            assert cassandra.__spec__.name == "turbocql"
            # isinstance agrees whichever name built the object.
            from turbocql.query import SimpleStatement as T
            from cassandra.query import SimpleStatement as C
            assert isinstance(T("SELECT 1"), C) and isinstance(C("SELECT 1"), T)
            # Module-level state is shared: set through one name, seen through the other.
            cassandra.cluster.Cluster.some_classic_knob = 42
            assert turbocql.cluster.Cluster.some_classic_knob == 42
            print("ok", type(Cluster(["127.0.0.1"])).__module__)
            """
        )
    )
    assert out.split() == ["ok", "turbocql.cluster"]


def test_versions_follow_the_classic_driver():
    """A library that branches on the classic version takes the branch for the API it gets;
    which driver runs is told by __turbocql_version__ and __name__."""
    out = ok(
        run_code(
            """
            import turbocql.compat
            turbocql.compat.install(allow_shadow=True)
            import cassandra
            from cassandra import __version__, __version_info__
            print(cassandra.__name__, __version__, cassandra.__turbocql_version__)
            print(__version_info__)
            print(cassandra.cluster.Cluster.__module__)
            """
        )
    )
    first, info, module = out.strip().splitlines()
    assert first.split() == ["turbocql", CLASSIC_API_VERSION, turbocql.__version__]
    assert info == "(3, 30, 1)"
    assert module == "turbocql.cluster"


def test_refuses_to_shadow_the_installed_classic_driver():
    proc = run_code(
        """
        import sys, turbocql.compat
        try:
            turbocql.compat.install()
        except turbocql.compat.ShadowError as e:
            print(e)
            assert isinstance(e, ImportError)
            assert not turbocql.compat.installed()
            assert "cassandra" not in sys.modules  # the check does not import the real driver
            sys.exit(3)
        """
    )
    assert proc.returncode == 3, proc.stderr
    assert "cassandra-driver 3.30.1" in proc.stdout
    for hint in ("allow_shadow=True", "--allow-shadow", "TURBOCQL_COMPAT_SHADOW=1"):
        assert hint in proc.stdout


def test_the_environment_variable_allows_shadowing():
    out = ok(
        run_code(
            """
            import turbocql.compat
            turbocql.compat.install()
            import cassandra
            print(cassandra.__name__)
            """,
            env=_env(TURBOCQL_COMPAT_SHADOW="1"),
        )
    )
    assert out.strip() == "turbocql"


def test_installs_without_override_where_no_classic_driver_exists(tmp_path):
    # -S: no site-packages, so neither the cassandra-driver distribution nor its package is
    # on the path: nothing to shadow, install() needs no override. turbocql comes from a
    # copy of the package this interpreter imports (the source tree holds the dev venv's
    # engine only; a nox session's is in its site-packages, beside the classic driver).
    import shutil

    lib = tmp_path / "lib"
    shutil.copytree(Path(turbocql.__file__).parent, lib / "turbocql")
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, %r)
        import turbocql.compat
        assert turbocql.compat._real_cassandra() == []
        turbocql.compat.install()
        import cassandra.query
        print(cassandra.query.__name__)
        """
        % str(lib)
    )
    proc = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=60
    )
    assert ok(proc).strip() == "turbocql.query"


def test_a_cassandra_package_found_on_the_path_counts_as_real(tmp_path):
    (tmp_path / "cassandra").mkdir()
    (tmp_path / "cassandra" / "__init__.py").write_text("raise SystemExit('the real package was imported')\n")
    code = textwrap.dedent(
        """
        import sys
        sys.path[:0] = [%r, %r]
        import turbocql.compat
        try:
            turbocql.compat.install()
        except turbocql.compat.ShadowError as e:
            print(e)
        """
        % (str(tmp_path), str(PYTHON_SRC))
    )
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=_env(), timeout=60)
    assert "a 'cassandra' package at %s" % (tmp_path / "cassandra" / "__init__.py") in ok(proc)


def test_too_late_when_cassandra_is_already_imported():
    proc = run_code(
        """
        import sys
        import cassandra  # the real classic driver
        import turbocql.compat
        try:
            turbocql.compat.install(allow_shadow=True)
        except turbocql.compat.AlreadyImportedError as e:
            print(e)
            assert not turbocql.compat.installed()
            sys.exit(3)
        """
    )
    assert proc.returncode == 3, proc.stderr
    assert "too late" in proc.stdout and "'cassandra' is already imported" in proc.stdout


def test_install_twice_is_a_no_op_and_uninstall_removes_the_aliases():
    ok(
        run_code(
            """
            import sys, turbocql.compat
            turbocql.compat.install(allow_shadow=True)
            turbocql.compat.install(allow_shadow=True)
            assert sum(type(f).__name__ == "_AliasFinder" for f in sys.meta_path) == 1
            import cassandra.cluster
            turbocql.compat.uninstall()
            assert not turbocql.compat.installed()
            assert not [n for n in sys.modules if n.split(".")[0] == "cassandra"]
            assert "turbocql.cluster" in sys.modules
            """
        )
    )


def test_a_module_turbocql_lacks_names_both_modules():
    out = ok(
        run_code(
            """
            import turbocql.compat
            turbocql.compat.install(allow_shadow=True)
            for name in ("cassandra.no_such_module", "cassandra.no_such_pkg.sub"):
                try:
                    __import__(name)
                except ModuleNotFoundError as e:
                    print(e.name, "|", e)
                else:
                    raise AssertionError(name)
            # The classic idiom for an optional module still falls back.
            try:
                from cassandra.no_such_module import Thing
            except ImportError:
                print("fallback")
            """
        )
    )
    first, second, fallback = out.strip().splitlines()
    assert first.startswith("cassandra.no_such_module |")
    assert "'cassandra.no_such_module'" in first and "'turbocql.no_such_module'" in first
    assert second.startswith("cassandra.no_such_pkg |") and "'turbocql.no_such_pkg'" in second
    assert fallback == "fallback"


def test_a_module_missing_inside_the_target_is_not_rewritten(tmp_path):
    # A stand-in target package whose module imports something absent: that error is the
    # module's own, and must reach the caller unchanged.
    pkg = tmp_path / "fakedriver"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "broken.py").write_text("import some_dependency_that_is_absent\n")
    out = ok(
        run_code(
            """
            import sys
            sys.path.insert(0, %r)
            import turbocql.compat
            turbocql.compat.TARGET = "fakedriver"
            turbocql.compat.install(allow_shadow=True)
            import cassandra
            assert cassandra.__name__ == "fakedriver"
            try:
                import cassandra.broken
            except ModuleNotFoundError as e:
                print(e.name)
                print(e)
            """
            % str(tmp_path)
        )
    )
    name, message = out.strip().splitlines()
    assert name == "some_dependency_that_is_absent" and "turbocql.compat" not in message


def test_install_from_env():
    code = """
        import turbocql.compat
        print(turbocql.compat.install_from_env())
        """
    assert ok(run_code(code)).strip() == "False"
    assert ok(run_code(code, env=_env(TURBOCQL_COMPAT="1", TURBOCQL_COMPAT_SHADOW="1"))).strip() == "True"


# -- python -m turbocql.compat ---------------------------------------------------------


def test_launcher_runs_a_script_like_python(tmp_path):
    script = tmp_path / "app.py"
    script.write_text(
        textwrap.dedent(
            """
            import os, sys
            from cassandra.cluster import Cluster
            import helper  # next to the script: sys.path[0] is the script's directory
            print(__name__, sys.argv[1:], type(Cluster(["127.0.0.1"])).__module__, helper.X)
            print(os.environ["TURBOCQL_COMPAT"], os.environ.get("TURBOCQL_COMPAT_SHADOW"))
            sys.exit(7)
            """
        )
    )
    (tmp_path / "helper.py").write_text("X = 'helper'\n")
    proc = subprocess.run(
        [sys.executable, "-m", "turbocql.compat", "--allow-shadow", str(script), "a", "--flag"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=60,
    )
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout.splitlines() == ["__main__ ['a', '--flag'] turbocql.cluster helper", "1 1"]


def test_launcher_runs_a_module_like_python_dash_m(tmp_path):
    (tmp_path / "mymod.py").write_text(
        "import sys, cassandra.query\nprint(__name__, sys.argv[1:], cassandra.query.__name__)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "turbocql.compat", "--allow-shadow", "-m", "mymod", "x", "-m", "y"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=60,
    )
    assert ok(proc).strip() == "__main__ ['x', '-m', 'y'] turbocql.query"


def test_launcher_dash_c():
    out = ok(
        run_code(
            "import sys, cassandra; print(cassandra.__name__, sys.argv)",
            "z",
            launcher=True,
            launcher_args=["--allow-shadow"],
        )
    )
    assert out.strip() == "turbocql ['-c', 'z']"


def test_launcher_refuses_to_shadow_without_the_flag(tmp_path):
    script = tmp_path / "app.py"
    script.write_text("print('ran')\n")
    proc = subprocess.run(
        [sys.executable, "-m", "turbocql.compat", str(script)], capture_output=True, text=True, env=_env(), timeout=60
    )
    assert proc.returncode == 1 and "ran" not in proc.stdout
    assert "refuses to shadow" in proc.stderr and "cassandra-driver 3.30.1" in proc.stderr
    assert "--allow-shadow" in proc.stderr


def test_launcher_usage_errors(tmp_path):
    def launch(*args):
        return subprocess.run(
            [sys.executable, "-m", "turbocql.compat", *args], capture_output=True, text=True, env=_env(), timeout=60
        )

    assert launch().returncode != 0 and "no script" in launch().stderr
    proc = launch("--allow-shadow", str(tmp_path / "missing.py"))
    assert proc.returncode == 2 and "can't open file" in proc.stderr
    proc = launch("--bogus", "x.py")
    assert proc.returncode != 0 and "unknown option '--bogus'" in proc.stderr
    proc = launch("--help")
    assert proc.returncode == 0 and "usage: python -m turbocql.compat" in proc.stdout
