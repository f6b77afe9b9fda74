"""Fixtures every interop test shares: the real geocompact binary, built once
per run from this checkout (or taken from GEOCOMPACT_BIN), and a runner that
calls it the way a user's pipeline does."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


class GeocompactError(RuntimeError):
    def __init__(self, args, code, stdout, stderr):
        super().__init__(f"geocompact {' '.join(args)} exited {code}:\n{stderr}")
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


class Geocompact:
    """Runs the geocompact binary against one warehouse."""

    def __init__(self, binary: Path, warehouse: Path):
        self.binary = binary
        self.warehouse = warehouse

    def run(self, *args: str, check: bool = True, json_out: bool = True, env=None):
        argv = [str(self.binary), "--warehouse", str(self.warehouse)]
        if json_out:
            argv.append("--json")
        argv += list(args)
        proc = subprocess.run(
            argv, capture_output=True, text=True, env={**os.environ, **(env or {})}
        )
        if check and proc.returncode != 0:
            raise GeocompactError(list(args), proc.returncode, proc.stdout, proc.stderr)
        if not json_out or proc.returncode != 0:
            return proc
        out = proc.stdout.strip()
        return json.loads(out) if out else None


@pytest.fixture(scope="session")
def geocompact_bin(tmp_path_factory) -> Path:
    given = os.environ.get("GEOCOMPACT_BIN")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("bin") / "geocompact"
    subprocess.run(["go", "build", "-o", str(out), "./cmd/geocompact"], cwd=ROOT, check=True)
    return out


@pytest.fixture
def warehouse(tmp_path) -> Path:
    w = tmp_path / "warehouse"
    w.mkdir()
    return w


@pytest.fixture
def gc(geocompact_bin, warehouse) -> Geocompact:
    return Geocompact(geocompact_bin, warehouse)
