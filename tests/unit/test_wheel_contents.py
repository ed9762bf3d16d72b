"""The driver's wheel holds the driver: nothing of turbocql-localdb (localdb/), of the benchmark
runner (benchmarks/runner/), of the tests or the scripts.

Building a wheel is too slow for a unit test, so this reads what maturin packages instead:
with ``python-source = "python"`` and ``module-name = "turbocql._engine"`` (pyproject.toml),
the wheel is every file under ``python/turbocql/`` plus the compiled module. The wheels CI
builds are opened and checked too (``scripts/wheels.py``'s ``check_contents``, tested here on
made-up wheels).
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "turbocql"
# Sub-packages (or modules) that were tooling and now live apart.
TOOLING = {"localdb", "bench"}
# Top-level modules the driver must never import: the tooling kept apart, the checkout's own.
NOT_THE_DRIVER = {"turbocql_localdb", "benchmarks", "tests", "scripts", "noxfile"}


def _packaged_files() -> list[Path]:
    """The files maturin puts in the wheel from python/turbocql (the compiled module, a build
    product, and Python's caches left out)."""
    return sorted(
        p
        for p in PACKAGE.rglob("*")
        if p.is_file() and "__pycache__" not in p.relative_to(PACKAGE).parts and p.suffix not in (".pyc", ".so")
    )


def test_maturin_packages_python_turbocql_only():
    maturin = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["maturin"]
    assert maturin["python-source"] == "python"
    assert maturin["module-name"] == "turbocql._engine"
    # Nothing else in python/ that a change of maturin's rules could pick up.
    assert sorted(p.name for p in (ROOT / "python").iterdir() if p.name != "__pycache__") == ["turbocql"]


def test_the_package_holds_no_tooling_and_no_tests():
    files = _packaged_files()
    assert PACKAGE / "__init__.py" in files and PACKAGE / "cluster.py" in files
    bad = []
    for path in files:
        rel = path.relative_to(PACKAGE)
        if rel.parts[0].removesuffix(".py") in TOOLING:
            bad.append(f"{rel}: tooling kept apart (localdb/, benchmarks/runner/)")
        elif {"tests", "test", "benchmarks", "scripts"} & set(rel.parts[:-1]) or path.name == "conftest.py":
            bad.append(f"{rel}: not the driver")
        elif path.suffix == ".py" and (path.name.startswith("test_") or path.name.endswith("_test.py")):
            bad.append(f"{rel}: a test")
        elif path.suffix not in (".py", ".pyi") and path.name != "py.typed":
            bad.append(f"{rel}: not a module, a stub or the py.typed marker")
    assert not bad, "python/turbocql would put these in the driver's wheel:\n" + "\n".join(bad)


def _imports(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, 0, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                yield node.lineno, node.level, node.module or "", alias.name


def test_no_module_of_the_driver_imports_the_tooling():
    bad = []
    for path in _packaged_files():
        if path.suffix not in (".py", ".pyi"):
            continue
        rel = path.relative_to(PACKAGE)
        for line, level, module, name in _imports(ast.parse(path.read_text(), str(path))):
            top = module.split(".")[0]
            if level == 0 and top in NOT_THE_DRIVER:
                bad.append(f"{rel}:{line}: imports {module}")
            elif level == 0 and module == "turbocql" and name in TOOLING:
                bad.append(f"{rel}:{line}: imports turbocql.{name}")
            elif level == 0 and top == "turbocql" and module.split(".")[1:2] and module.split(".")[1] in TOOLING:
                bad.append(f"{rel}:{line}: imports {module}")
            elif level > 0 and (top in TOOLING or (not module and name in TOOLING)):
                bad.append(f"{rel}:{line}: imports {'.' * level}{module or name}")
    assert not bad, "\n".join(bad)


def test_the_subcommands_of_the_tooling_point_outside_the_package():
    from turbocql.__main__ import MISSING, SUBCOMMANDS

    assert SUBCOMMANDS["localdb"] == "turbocql_localdb.cli"
    assert SUBCOMMANDS["bench"] == "benchmarks.runner.cli"
    assert set(MISSING) == {SUBCOMMANDS["localdb"], SUBCOMMANDS["bench"]}


# --- scripts/wheels.py's check of the wheels CI builds -------------------------------------


def _wheels_module():
    spec = importlib.util.spec_from_file_location("turbocql_scripts_wheels", ROOT / "scripts" / "wheels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DRIVER_FILES = [
    "turbocql/__init__.py",
    "turbocql/__main__.py",
    "turbocql/cluster.py",
    "turbocql/bulk/cli.py",
    "turbocql/cqlengine/models.py",
    "turbocql/_engine.pyi",
    "turbocql/py.typed",
    "turbocql/_engine.cpython-311-x86_64-linux-gnu.so",
    "turbocql-0.1.0.dist-info/METADATA",
    "turbocql-0.1.0.dist-info/WHEEL",
    "turbocql-0.1.0.dist-info/entry_points.txt",
    "turbocql-0.1.0.dist-info/RECORD",
]


def _wheel(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "turbocql-0.1.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(path, "w") as z:
        for name in names:
            z.writestr(name, "")
    return path


def test_wheels_check_contents_takes_the_driver(tmp_path):
    _wheels_module().check_contents(_wheel(tmp_path, DRIVER_FILES))


@pytest.mark.parametrize(
    "extra",
    [
        "turbocql/localdb/__init__.py",
        "turbocql/localdb/toxiproxy.py",
        "turbocql/bench/cli.py",
        "turbocql/bench.py",
        "turbocql_localdb/__init__.py",
        "benchmarks/runner/cli.py",
        "tests/unit/test_api.py",
        "turbocql/tests/test_cluster.py",
        "turbocql/test_cluster.py",
        "turbocql/conftest.py",
        "scripts/wheels.py",
        "noxfile.py",
    ],
)
def test_wheels_check_contents_refuses_anything_else(tmp_path, extra):
    with pytest.raises(SystemExit) as e:
        _wheels_module().check_contents(_wheel(tmp_path, [*DRIVER_FILES, extra]))
    assert "holds more than the driver" in str(e.value) and extra in str(e.value)
