"""Catalogs from PyIceberg's configuration, and secrets kept out of every
output."""

from __future__ import annotations

import logging
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import write_geoparquet
from pyiceberg.catalog.sql import SqlCatalog

import geocompact
from geocompact import CommandError, ProgressEvent


def test_catalog_dict_reaches_the_binary(tmp_path: Path, warehouse: Path) -> None:
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path}/cat.db", "warehouse": f"file://{tmp_path}/wh"}
    f = write_geoparquet(tmp_path / "a.parquet", 200)
    res = geocompact.ingest("gis.points", [f], create=True, add_bbox=True, catalog=props, catalog_name="lake")
    assert res.rows == 200
    # PyIceberg sees the table under the same catalog name.
    cat = SqlCatalog("lake", uri=props["uri"], warehouse=props["warehouse"])
    assert cat.load_table("gis.points").scan().to_arrow().num_rows == 200


def test_cli_reads_pyiceberg_yaml(tmp_path: Path, warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "pyhome"
    home.mkdir()
    (home / ".pyiceberg.yaml").write_text(
        f"catalog:\n  prod:\n    uri: sqlite:///{tmp_path}/prod.db\n    warehouse: file://{tmp_path}/prodwh\n"
    )
    monkeypatch.setenv("PYICEBERG_HOME", str(home))
    binary = geocompact.find_binary()
    for day in range(3):
        f = write_geoparquet(tmp_path / f"d{day}.parquet", 300, offset=day)
        args = [binary, "--catalog", "prod", "ingest", "--table", "gis.telemetry", str(f), "--add-bbox"]
        subprocess.run(args + (["--create"] if day == 0 else []), check=True, capture_output=True)
    out = subprocess.run(
        [binary, "rewrite", "--catalog", "prod", "--table", "gis.telemetry", "--curve", "hilbert",
         "--option", "min-input-files=2", "--json"],
        capture_output=True, text=True,
    )
    assert out.returncode == 0, out.stderr
    assert '"rewritten_data_files_count":3' in out.stdout.replace(" ", "")


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


SECRETS = ["client-id:cred-s3cr3t-9f2c", "tok-s3cr3t-77ab", "pw-s3cr3t-41d0"]


@pytest.mark.parametrize(
    "props",
    [
        {"type": "rest", "uri": "http://127.0.0.1:{port}", "credential": SECRETS[0]},
        {"type": "rest", "uri": "http://127.0.0.1:{port}", "token": SECRETS[1]},
        {"type": "sql", "uri": "postgresql+psycopg2://gis:" + SECRETS[2] + "@127.0.0.1:{port}/iceberg"},
    ],
    ids=["rest-credential", "rest-token", "sql-password"],
)
def test_secrets_never_shown(props: dict[str, str], warehouse: Path, caplog: pytest.LogCaptureFixture) -> None:
    props = {k: v.format(port=closed_port()) for k, v in props.items()}
    events: list[ProgressEvent] = []
    with caplog.at_level(logging.DEBUG, logger="geocompact"), pytest.raises(CommandError) as e:
        geocompact.metrics("gis.telemetry", catalog=props, catalog_name="prod", progress=events.append)
    err = e.value
    seen = "\n".join([str(err), err.stderr, " ".join(err.argv), caplog.text, repr(events)])
    assert "prod" in str(err)
    for s in SECRETS:
        assert s not in seen
        assert s.split(":")[-1] not in seen
