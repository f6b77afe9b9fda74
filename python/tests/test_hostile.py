"""The Python API against hostile arguments, conflicting catalog
configurations and signals: it acts on exactly the table and files the
caller named, sends no secret to another catalog's host, and a call that
raises leaves no command running behind it."""

from __future__ import annotations

import http.server
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import generate, write_geoparquet

import geocompact
from geocompact import CommandError, GeocompactError, GeocompactTimeout, ProgressEvent, UsageError, ValidationError

SECRET = "prod-client:s3cr3t-5b1e"
ENV_SECRET = "env-tok-s3cr3t-93aa"


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers 404 to everything and records each request."""

    received: list[str]

    def _record(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode(errors="replace") if n else ""
        self.received.append(f"{self.command} {self.path}\n{self.headers}\n{body}")
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _record

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that records what it receives."""
    received: list[str] = []
    handler = type("H", (Recorder,), {"received": received})
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", received
    srv.shutdown()
    srv.server_close()


def sql_props(tmp_path: Path, name: str) -> dict[str, str]:
    return {"type": "sql", "uri": f"sqlite:///{tmp_path}/{name}.db", "warehouse": f"file://{tmp_path}/{name}wh"}


def own_config(tmp_path: Path, name: str) -> str:
    """A geocompact config file whose catalog default is the SQLite catalog name."""
    return textwrap.dedent(f"""\
        catalogs:
          default:
            type: sql
            warehouse: file://{tmp_path}/{name}wh
            properties:
              uri: file:{tmp_path}/{name}.db
              sql.dialect: sqlite
              sql.driver: sqlite
        """)


@pytest.mark.parametrize("where", ["cwd", "home"])
def test_dict_catalog_beats_same_name_config_file(where: str, tmp_path: Path, warehouse: Path) -> None:
    path = Path("geocompact.yaml") if where == "cwd" else tmp_path / "home" / ".config" / "geocompact" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(own_config(tmp_path, "prod"))
    subprocess.run([geocompact.find_binary(), "--catalog", "default", "generate", "--table", "prod.important",
                    "--rows", "500", "--commits", "3", "--seed", "1"], check=True, capture_output=True)
    before = geocompact.metrics("prod.important", catalog="default").snapshot_count
    assert before == 3
    scratch = sql_props(tmp_path, "scratch")
    with pytest.raises(CommandError):
        geocompact.expire("prod.important", catalog=scratch, older_than="0s", force=True)
    with pytest.raises(CommandError):
        geocompact.expire("prod.important", catalog=FakeCatalog("default", scratch), older_than="0s", force=True)
    assert geocompact.metrics("prod.important", catalog="default").snapshot_count == before


class FakeCatalog:
    """What the API reads of a PyIceberg Catalog object."""

    name: str
    properties: Mapping[str, str]

    def __init__(self, name: str, properties: Mapping[str, str]) -> None:
        self.name = name
        self.properties = properties


def test_dict_catalog_sends_no_other_secret(
    tmp_path: Path, warehouse: Path, recorder: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, received = recorder
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".pyiceberg.yaml").write_text(
        f"catalog:\n  default:\n    type: rest\n    uri: https://prod.invalid\n    credential: {SECRET}\n"
        "    warehouse: prod-warehouse\n"
    )
    monkeypatch.setenv("PYICEBERG_CATALOG__DEFAULT__TOKEN", ENV_SECRET)
    monkeypatch.setenv("PYICEBERG_CATALOG__DEFAULT__S3__SECRET_ACCESS_KEY", ENV_SECRET)
    for cat in ({"type": "rest", "uri": uri}, FakeCatalog("default", {"type": "rest", "uri": uri})):
        with pytest.raises(CommandError):
            geocompact.metrics("gis.telemetry", catalog=cat)
    seen = "\n".join(received)
    assert received, "the given catalog's endpoint was not reached"
    for s in (SECRET, SECRET.split(":")[1], ENV_SECRET, "prod-warehouse"):
        assert s not in seen


def test_shell_mixed_sources_send_nothing(
    tmp_path: Path, warehouse: Path, recorder: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    uri, received = recorder
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / ".pyiceberg.yaml").write_text(
        f"catalog:\n  default:\n    type: rest\n    uri: https://prod.invalid\n    credential: {SECRET}\n"
    )
    monkeypatch.setenv("PYICEBERG_CATALOG__DEFAULT__URI", uri)
    out = subprocess.run([geocompact.find_binary(), "--catalog", "default", "metrics", "--table", "gis.t"],
                         capture_output=True, text=True)
    assert out.returncode != 0
    assert "credential" in out.stderr and SECRET not in out.stderr
    assert received == []


@pytest.mark.parametrize("name", ["my_cat", "a.b", "Lake-2"])
def test_catalog_names_round_trip(name: str, tmp_path: Path, warehouse: Path) -> None:
    props = sql_props(tmp_path, "named")
    f = write_geoparquet(tmp_path / "a.parquet", 100)
    assert geocompact.ingest("gis.points", [f], create=True, add_bbox=True, catalog=props, catalog_name=name).rows == 100
    assert geocompact.metrics("gis.points", catalog=FakeCatalog(name, props)).total_records == 100


def test_dict_keys_with_underscore(tmp_path: Path, warehouse: Path) -> None:
    props = sql_props(tmp_path, "k") | {"s3.force_virtual_addressing": "false"}
    f = write_geoparquet(tmp_path / "a.parquet", 10)
    assert geocompact.ingest("gis.points", [f], create=True, add_bbox=True, catalog=props).rows == 10


def test_file_names_are_never_flags(tmp_path: Path, warehouse: Path) -> None:
    a = write_geoparquet(tmp_path / "a.parquet", 100)
    assert geocompact.ingest("gis.d", [a], create=True, add_bbox=True, warehouse=warehouse).rows == 100
    with pytest.raises(GeocompactError) as e:
        geocompact.ingest("gis.d", ["--allow-duplicates", a], add_bbox=True, warehouse=warehouse)
    assert "--allow-duplicates" in e.value.message
    assert geocompact.metrics("gis.d", warehouse=warehouse).total_records == 100
    dash = write_geoparquet(Path("-v.parquet"), 50, offset=3)
    assert geocompact.ingest("gis.d", [Path("-v.parquet")], add_bbox=True, warehouse=warehouse).rows == 50
    with pytest.raises(ValidationError) as v:
        geocompact.validate(files=[dash.name])
    assert "-v.parquet" in json.dumps(v.value.result.raw)
    assert geocompact.metrics("gis.d", warehouse=warehouse).total_records == 150


def test_flag_like_values_stay_values(warehouse: Path, demo: str) -> None:
    with pytest.raises(UsageError):
        geocompact.expire(demo, older_than="--force", warehouse=warehouse)
    with pytest.raises(UsageError):
        geocompact.rewrite(demo, curve="--dry-run", warehouse=warehouse)
    with pytest.raises(UsageError, match='bad table identifier: "--json"'):
        geocompact.metrics("--json", warehouse=warehouse)


def fake_binary(tmp_path: Path, body: str) -> str:
    path = tmp_path / "fake-geocompact"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def test_exit_code_before_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEOCOMPACT_BINARY", fake_binary(
        tmp_path, "echo 'not json {'\necho 'geocompact: --table: table gis.x does not exist' >&2\nexit 2\n"))
    with pytest.raises(UsageError) as e:
        geocompact.metrics("gis.x")
    assert e.value.message == "--table: table gis.x does not exist"
    assert e.value.result is None
    monkeypatch.setenv("GEOCOMPACT_BINARY", fake_binary(tmp_path, "echo 'not json {'\n"))
    with pytest.raises(CommandError, match="not JSON"):
        geocompact.metrics("gis.x")


def sleeper(tmp_path: Path) -> tuple[str, Path]:
    """A binary that records its pid, sleeps, and notes a SIGTERM."""
    state = tmp_path / "state"
    body = f"""echo $$ > {state}.pid
trap 'echo terminated > {state}.sig; exit 143' TERM INT
i=0; while [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
echo finished > {state}.sig
"""
    return fake_binary(tmp_path, body), state


def gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_timeout_stops_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    binary, state = sleeper(tmp_path)
    monkeypatch.setenv("GEOCOMPACT_BINARY", binary)
    with pytest.raises(GeocompactTimeout) as e:
        geocompact.metrics("gis.x", timeout=0.5)
    assert isinstance(e.value, GeocompactError)
    assert gone(int(Path(f"{state}.pid").read_text()))
    assert Path(f"{state}.sig").read_text().strip() == "terminated"


class Alarm(Exception):
    pass


def _raise_alarm(signum: int, frame: Any) -> None:
    raise Alarm()


@pytest.mark.parametrize("exc", [Alarm, KeyboardInterrupt])
def test_exception_mid_call_stops_the_command(
    exc: type[BaseException], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    binary, state = sleeper(tmp_path)
    monkeypatch.setenv("GEOCOMPACT_BINARY", binary)

    def handler(signum: int, frame: Any) -> None:
        raise exc()

    old = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        with pytest.raises(exc):
            geocompact.metrics("gis.x")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert gone(int(Path(f"{state}.pid").read_text()))
    assert Path(f"{state}.sig").read_text().strip() == "terminated"


def table_files(warehouse: Path) -> set[Path]:
    return {p for p in warehouse.rglob("*") if p.is_file() and p.suffix in (".parquet", ".avro")}


def test_alarm_mid_rewrite_commits_nothing(warehouse: Path) -> None:
    generate(warehouse, "demo.big", rows=200000, commits=20)
    before_files = table_files(warehouse)
    before = geocompact.metrics("demo.big", warehouse=warehouse).snapshot_count

    def on_event(ev: ProgressEvent) -> None:
        os.kill(os.getpid(), signal.SIGALRM)

    old = signal.signal(signal.SIGALRM, _raise_alarm)
    try:
        with pytest.raises(Alarm):
            geocompact.rewrite("demo.big", curve="hilbert", warehouse=warehouse, progress=on_event,
                               options={"min-input-files": 2})
    finally:
        signal.signal(signal.SIGALRM, old)
    time.sleep(2)
    assert geocompact.metrics("demo.big", warehouse=warehouse).snapshot_count == before
    assert table_files(warehouse) == before_files


def test_sigterm_to_python_stops_the_command(tmp_path: Path, warehouse: Path) -> None:
    generate(warehouse, "demo.big", rows=200000, commits=20)
    before_files = table_files(warehouse)
    before = geocompact.metrics("demo.big", warehouse=warehouse).snapshot_count
    started = tmp_path / "started"
    script = textwrap.dedent(f"""\
        import os, pathlib, time
        import geocompact

        def on_event(ev):
            pathlib.Path({str(started)!r}).write_text("x")
            time.sleep(60)  # the reader thread holds here; SIGTERM arrives meanwhile

        geocompact.rewrite("demo.big", curve="hilbert", warehouse={str(warehouse)!r},
                           progress=on_event, options={{"min-input-files": 2}})
        """)
    py = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.monotonic() + 60
    while not started.exists():
        assert py.poll() is None, "the Python process ended before the command started"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    children = [int(c) for c in Path(f"/proc/{py.pid}/task/{py.pid}/children").read_text().split()]
    assert children, "no command running"
    py.send_signal(signal.SIGTERM)
    py.wait(timeout=30)
    for c in children:
        assert gone(c), f"command {c} outlived the Python process"
    time.sleep(2)
    assert geocompact.metrics("demo.big", warehouse=warehouse).snapshot_count == before
    assert table_files(warehouse) == before_files
