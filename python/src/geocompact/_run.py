"""Running the bundled binary: arguments, catalog environment, progress and
exit codes."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, Union, runtime_checkable

from ._binary import find_binary
from .errors import error_for

_log = logging.getLogger("geocompact")


@dataclass(frozen=True)
class ProgressEvent:
    """One log record of a running command: a phase done, with its counts
    (``msg`` is constant, e.g. ``"rewrite group done"``; ``attrs`` holds
    ``files_in``, ``bytes_out``, ``duration`` and the like)."""

    msg: str
    level: str
    attrs: dict[str, Any] = field(default_factory=dict)


#: A progress callback: called from a reader thread, once per record.
ProgressCallback = Callable[[ProgressEvent], None]


@runtime_checkable
class CatalogLike(Protocol):
    """What the API reads of a PyIceberg ``Catalog``: its name and
    properties."""

    name: str
    properties: Mapping[str, str]


#: A catalog: a name (from geocompact's config file or PyIceberg's
#: ``~/.pyiceberg.yaml`` / ``PYICEBERG_CATALOG__*``), a PyIceberg Catalog,
#: or a dict of PyIceberg catalog properties (``type``, ``uri``, ...).
Catalog = Union[str, CatalogLike, Mapping[str, str]]

# PyIceberg's catalog classes by the type they implement, for a Catalog
# object whose properties do not name it.
_CATALOG_TYPES = {"SqlCatalog": "sql", "RestCatalog": "rest", "GlueCatalog": "glue", "HiveCatalog": "hive"}


def catalog_env(catalog: CatalogLike | Mapping[str, str], name: str) -> tuple[str, dict[str, str]]:
    """Returns the catalog's name and the ``PYICEBERG_CATALOG__<NAME>__<KEY>``
    variables that carry its properties to the binary, in PyIceberg's own
    encoding (``.`` as ``__``, ``-`` as ``_``). Secrets travel in the child's
    environment only, never on its command line."""
    if isinstance(catalog, CatalogLike):
        name = catalog.name
        props = {str(k): str(v) for k, v in catalog.properties.items()}
        typ = _CATALOG_TYPES.get(type(catalog).__name__)
        if typ and "type" not in props and "py-catalog-impl" not in props:
            props["type"] = typ
    else:
        props = {str(k): str(v) for k, v in catalog.items()}
    env = {}
    prefix = "PYICEBERG_CATALOG__" + _encode(name) + "__"
    for k, v in props.items():
        if "_" in k:
            raise ValueError(f"catalog property {k!r}: PyIceberg's environment encoding cannot carry '_' in a key")
        env[prefix + _encode(k)] = v
    return name, env


def _encode(s: str) -> str:
    return s.replace(".", "__").replace("-", "_").upper()


def _strip_prefix(line: str) -> str:
    return line[len("geocompact: ") :] if line.startswith("geocompact: ") else line


def run(
    args: Sequence[str],
    *,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: str | None = None,
    config: str | None = None,
    env: Mapping[str, str] | None = None,
    progress: ProgressCallback | None = None,
    logger: logging.Logger | None = None,
    timeout: float | None = None,
    json_flag: Sequence[str] = ("--json",),
) -> Any:
    """Runs ``geocompact <global flags> <args> --json`` and returns its JSON
    document (None when it printed nothing).

    Log records (``--log-format json -v``) go to ``progress`` and to
    ``logger`` (default ``logging.getLogger("geocompact")``), never to
    stdout. A non-zero exit raises the exception of its code, carrying the
    document the command printed, if any.
    """
    child_env = dict(os.environ)
    if env:
        child_env.update(env)
    argv = [find_binary(), "--log-format", "json", "--log-level", "info"]
    if warehouse is not None:
        argv += ["--warehouse", os.fspath(warehouse)]
    if config is not None:
        argv += ["--config", os.fspath(config)]
    if isinstance(catalog, str):
        argv += ["--catalog", catalog]
    elif catalog is not None:
        name, cat_env = catalog_env(catalog, catalog_name)
        child_env.update(cat_env)
        argv += ["--catalog", name]
    argv += list(args) + list(json_flag)
    log = logger or _log

    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, text=True
    )
    other: list[str] = []
    chunks: list[str] = []
    assert proc.stderr is not None and proc.stdout is not None
    stdout = proc.stdout
    readers = [
        threading.Thread(target=_read_stderr, args=(proc.stderr, progress, log, other), daemon=True),
        threading.Thread(target=lambda: chunks.append(stdout.read()), daemon=True),
    ]
    for r in readers:
        r.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()  # the binary cleans up its spill files and writes nothing half-done
        proc.wait()
        raise
    finally:
        for r in readers:
            r.join()
        proc.stdout.close()
        proc.stderr.close()
    out = "".join(chunks)
    doc = json.loads(out) if out.strip() else None
    if proc.returncode != 0:
        lines = [_strip_prefix(line) for line in other if line.strip()]
        message = lines[-1] if lines else ""
        cls = error_for(proc.returncode)
        raise cls(message, exit_code=proc.returncode, stderr="\n".join(other), argv=argv, result=doc)
    return doc


def _read_stderr(
    stream: IO[str], progress: ProgressCallback | None, log: logging.Logger, other: list[str]
) -> None:
    for line in stream:
        line = line.rstrip("\n")
        rec = _log_record(line)
        if rec is None:
            other.append(line)
            continue
        attrs = {k: v for k, v in rec.items() if k not in ("time", "level", "msg")}
        level = str(rec.get("level", "INFO"))
        log.log(logging.getLevelName(level) if isinstance(logging.getLevelName(level), int) else logging.INFO,
                "%s %s", rec.get("msg", ""), " ".join(f"{k}={v}" for k, v in attrs.items()))
        if progress is not None:
            progress(ProgressEvent(msg=str(rec.get("msg", "")), level=level, attrs=attrs))


def _log_record(line: str) -> dict[str, Any] | None:
    if not line.startswith("{"):
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if isinstance(rec, dict) and "msg" in rec and "level" in rec:
        return rec
    return None
