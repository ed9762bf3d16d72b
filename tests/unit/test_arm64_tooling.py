"""The pure logic of the aarch64 tooling: scripts/wheels.py's platforms and its check of the
engine's CPU, and tests/timeout_scale.py's multiplied limits (scripts/arm64.sh loads it)."""

from __future__ import annotations

import importlib.util
import struct
import zipfile
from pathlib import Path

import pytest

from tests import timeout_scale

ROOT = Path(__file__).resolve().parents[2]


def _wheels_module():
    spec = importlib.util.spec_from_file_location("turbocql_scripts_wheels_arm64", ROOT / "scripts" / "wheels.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _elf_header(machine: int, elf_class: int = 2, data: int = 1) -> bytes:
    return b"\x7fELF" + bytes([elf_class, data, 1]) + bytes(9) + struct.pack("<HH", 3, machine) + bytes(44)


def _wheel(tmp_path: Path, so_bytes: bytes, name: str = "turbocql/_engine.cpython-313-aarch64-linux-gnu.so") -> Path:
    path = tmp_path / "turbocql-0.1.0-cp313-cp313-manylinux_2_28_aarch64.whl"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("turbocql/__init__.py", "")
        z.writestr(name, so_bytes)
    return path


def test_each_architecture_has_its_own_directories_and_tag():
    wheels = _wheels_module()
    x86, arm = wheels.PLATFORMS["x86_64"], wheels.PLATFORMS["aarch64"]
    # x86_64 as before: its tag, kept wheels and Cargo target dir unchanged.
    assert (x86.tag, x86.kept, x86.target_dir, x86.rust_target) == (
        wheels.TAG,
        ROOT / "target" / "nox-wheels",
        ROOT / "target" / "manylinux",
        None,
    )
    assert arm.tag == "manylinux_2_28_aarch64"
    assert arm.rust_target == "aarch64-unknown-linux-gnu"
    assert arm.kept != x86.kept and arm.target_dir != x86.target_dir
    assert not arm.kept.is_relative_to(x86.kept) and not arm.target_dir.is_relative_to(x86.target_dir)
    assert (wheels.summary_name("x86_64"), wheels.summary_name("aarch64")) == ("wheels.json", "wheels-aarch64.json")


def test_cross_build_env_drops_a_stray_sysconfig(monkeypatch):
    wheels = _wheels_module()
    monkeypatch.setenv("PYO3_CROSS_LIB_DIR", "/some/x86_64/root/usr/lib/python3.14")
    arm = wheels.PLATFORMS["aarch64"]
    env = wheels.build_env(None, arm)
    assert "PYO3_CROSS_LIB_DIR" not in env and env["CARGO_TARGET_DIR"] == str(arm.target_dir)
    assert wheels.build_env("/arm64/usr/lib/python3.14", arm)["PYO3_CROSS_LIB_DIR"] == "/arm64/usr/lib/python3.14"
    # The host's build keeps its environment as it always did.
    assert wheels.build_env(None)["PYO3_CROSS_LIB_DIR"] == "/some/x86_64/root/usr/lib/python3.14"


def test_elf_machine_reads_64_bit_little_endian_headers_only():
    wheels = _wheels_module()
    assert wheels.elf_machine(_elf_header(183)) == 183
    assert wheels.elf_machine(_elf_header(62)) == 62
    assert wheels.elf_machine(_elf_header(183, elf_class=1)) is None  # 32-bit
    assert wheels.elf_machine(_elf_header(183, data=2)) is None  # big-endian
    assert wheels.elf_machine(b"MZ" + bytes(30)) is None
    assert wheels.elf_machine(b"\x7fELF") is None


def test_check_machine_takes_the_platforms_cpu_only(tmp_path):
    wheels = _wheels_module()
    arm, x86 = wheels.PLATFORMS["aarch64"], wheels.PLATFORMS["x86_64"]
    wheels.check_machine(_wheel(tmp_path, _elf_header(183)), arm)
    with pytest.raises(SystemExit, match="ELF machine 62"):
        wheels.check_machine(_wheel(tmp_path, _elf_header(62)), arm)
    with pytest.raises(SystemExit, match="ELF machine 183"):
        wheels.check_machine(_wheel(tmp_path, _elf_header(183)), x86)
    with pytest.raises(SystemExit, match="expected one"):
        wheels.check_machine(_wheel(tmp_path, _elf_header(183), name="turbocql/other.so"), arm)


def test_timeout_scale_from_env():
    assert timeout_scale.scale_from_env({}) == 1
    assert timeout_scale.scale_from_env({timeout_scale.ENV: " 8 "}) == 8
    for bad in ("eight", "0", "-2"):
        with pytest.raises(pytest.UsageError):
            timeout_scale.scale_from_env({timeout_scale.ENV: bad})


@pytest.mark.parametrize(
    ("args", "kwargs", "default", "expected"),
    [
        ((30,), {}, 120, ((300.0,), {})),  # a test's own limit
        ((), {"timeout": 5, "method": "thread"}, 120, ((50.0,), {"method": "thread"})),
        ((20, "signal"), {"func_only": True}, 120, ((200.0, "signal"), {"func_only": True})),
        ((), {}, 120, ((1200.0,), {})),  # the run's limit
        ((0,), {}, 120, ((0,), {})),  # no limit stays none
        ((), {}, None, ((), {})),
    ],
)
def test_scaled_marker_args(args, kwargs, default, expected):
    assert timeout_scale.scaled_marker_args(args, kwargs, default, 10) == expected
