"""Fixtures: tables made by the installed binary, and GeoParquet files
written with pyarrow."""

from __future__ import annotations

import json
import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import geocompact


def wkb_point(x: float, y: float) -> bytes:
    """A little-endian WKB point."""
    return struct.pack("<BIdd", 1, 1, x, y)


def write_geoparquet(path: Path, n: int, *, offset: float = 0.0, bad_rows: int = 0) -> Path:
    """Writes n points with GeoParquet metadata; the first bad_rows rows
    hold bytes that are not WKB."""
    geoms = [wkb_point(offset + (i % 100) * 0.01, (i // 100) * 0.01) for i in range(n)]
    for i in range(bad_rows):
        geoms[i] = b"\x01\x07\x00"
    table = pa.table({"id": pa.array(range(n), pa.int64()), "geometry": pa.array(geoms, pa.binary())})
    geo = {
        "version": "1.1.0",
        "primary_column": "geometry",
        "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"]}},
    }
    table = table.replace_schema_metadata({b"geo": json.dumps(geo).encode()})
    pq.write_table(table, path)
    return path


def generate(warehouse: Path, name: str, rows: int = 20000, commits: int = 12) -> None:
    """Makes a fragmented spatial table with the binary's generate."""
    subprocess.run(
        [geocompact.find_binary(), "--warehouse", str(warehouse), "generate", "--table", name,
         "--rows", str(rows), "--commits", str(commits), "--seed", "7"],
        check=True, capture_output=True,
    )


@pytest.fixture
def warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An empty warehouse; the working directory and HOME are temporary, so
    no config file of the machine is read."""
    wh = tmp_path / "warehouse"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PYICEBERG_HOME", raising=False)
    yield wh


@pytest.fixture
def demo(warehouse: Path) -> str:
    """demo.pings: 20,000 points in 12 arrival-order files."""
    generate(warehouse, "demo.pings")
    return "demo.pings"
