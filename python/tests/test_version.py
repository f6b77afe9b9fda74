"""The wheel's binary and module: one version, and the binary is the one
the wheel installed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import geocompact


def test_version_agrees_with_binary() -> None:
    out = subprocess.run([geocompact.find_binary(), "--version"], check=True, capture_output=True, text=True).stdout
    assert out.splitlines()[0] == f"geocompact {geocompact.__version__}"
    assert geocompact.__version__ != "0+unknown"


def test_version_matches_repository_version_file() -> None:
    version_file = Path(__file__).resolve().parents[2] / "VERSION"
    assert geocompact.__version__ == version_file.read_text().strip()


def test_binary_is_the_installed_script() -> None:
    binary = Path(geocompact.find_binary())
    assert binary.parent == Path(sysconfig.get_path("scripts"))
    assert os.access(binary, os.X_OK)
    # The command on PATH in this environment is the same file.
    on_path = shutil.which("geocompact", path=sysconfig.get_path("scripts"))
    assert on_path is not None and Path(on_path) == binary


def test_python_dash_m_runs_the_binary() -> None:
    out = subprocess.run([sys.executable, "-m", "geocompact", "--version"], check=True, capture_output=True, text=True)
    assert out.stdout.splitlines()[0] == f"geocompact {geocompact.__version__}"


def test_no_go_toolchain_when_testing_the_wheel() -> None:
    # test_wheel.sh strips Go from PATH: the wheel must work without it.
    if os.environ.get("GEOCOMPACT_WHEEL_TEST") == "1":
        assert shutil.which("go") is None, "go is on PATH; the wheel test must run without it"
