"""Running the bundled binary: arguments, catalog environment, progress and
exit codes."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, Protocol, Union, runtime_checkable

from ._binary import find_binary
from .errors import CommandError, GeocompactTimeout, error_for

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


#: The variable that carries a catalog object's or dict's properties to the
#: binary, as JSON, read with ``--catalog-from-env``.
CATALOG_PROPERTIES_ENV = "GEOCOMPACT_CATALOG_PROPERTIES"


def catalog_properties(catalog: CatalogLike | Mapping[str, str], name: str) -> tuple[str, dict[str, str]]:
    """Returns the name and the properties of a PyIceberg Catalog object
    (its own name) or of a dict of properties (called ``name``)."""
    if isinstance(catalog, CatalogLike):
        name = catalog.name
        props = {str(k): str(v) for k, v in catalog.properties.items()}
        typ = _CATALOG_TYPES.get(type(catalog).__name__)
        if typ and "type" not in props and "py-catalog-impl" not in props:
            props["type"] = typ
    else:
        props = {str(k): str(v) for k, v in catalog.items()}
    return name, props


def catalog_env(catalog: CatalogLike | Mapping[str, str], name: str) -> dict[str, str]:
    """Returns the environment that hands the catalog to the binary alone:
    its name and properties as JSON in ``GEOCOMPACT_CATALOG_PROPERTIES``,
    read with ``--catalog-from-env``. Nothing else defines it: no config
    file, ``~/.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__*`` variable of the
    same name is merged in, so no other definition's credential travels to
    this catalog's endpoint. Names and keys keep their ``_`` and ``.``.
    Secrets travel in the child's environment only, never on its command
    line."""
    name, props = catalog_properties(catalog, name)
    return {CATALOG_PROPERTIES_ENV: json.dumps({"name": name, "properties": props})}


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
    positional: Sequence[str] = (),
) -> Any:
    """Runs ``geocompact <global flags> <args> --json`` and returns its JSON
    document (None when it printed nothing).

    Log records (``--log-format json -v``) go to ``progress`` and to
    ``logger`` (default ``logging.getLogger("geocompact")``), never to
    stdout. ``positional`` (file names) follow ``--``, so none is read as
    a flag. A non-zero exit raises the exception of its code, carrying the
    document the command printed, if any; ``timeout`` raises
    :class:`GeocompactTimeout`. On any exception (a timeout, a signal
    handler's, ``KeyboardInterrupt``) the command is stopped before it
    propagates; on Linux it also dies with this process.
    """
    child_env = dict(os.environ)
    if env:
        child_env.update(env)
    argv = [find_binary(), "--log-format", "json", "--log-level", "info"]
    if warehouse is not None:
        argv += ["--warehouse", os.fspath(warehouse)]
    if config is not None:
        argv += ["--config", os.fspath(config)]
    child_env.pop(CATALOG_PROPERTIES_ENV, None)
    if isinstance(catalog, str):
        argv += ["--catalog", catalog]
    elif catalog is not None:
        child_env.update(catalog_env(catalog, catalog_name))
        argv.append("--catalog-from-env")
    argv += list(args) + list(json_flag)
    if positional:
        # After "--", a file called "-v.parquet" or "--allow-duplicates" is
        # a file, never a flag.
        argv += ["--", *positional]
    log = logger or _log

    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, text=True,
        preexec_fn=_die_with_parent if _prctl is not None else None,
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
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        stop(proc)
    except BaseException:
        # A SIGALRM timeout, a KeyboardInterrupt, any exception: the
        # command stops before the caller hears of the failure, so nothing
        # commits afterwards.
        stop(proc)
        raise
    finally:
        for r in readers:
            r.join()
        proc.stdout.close()
        proc.stderr.close()
    out = "".join(chunks)
    lines = [_strip_prefix(line) for line in other if line.strip()]
    if timed_out:
        raise GeocompactTimeout(f"geocompact did not finish within {timeout} s and was stopped",
                                exit_code=proc.returncode, stderr="\n".join(other), argv=argv)
    if proc.returncode != 0:
        message = lines[-1] if lines else ""
        cls = error_for(proc.returncode)
        raise cls(message, exit_code=proc.returncode, stderr="\n".join(other), argv=argv, result=_json_or_none(out))
    try:
        return json.loads(out) if out.strip() else None
    except ValueError:
        raise CommandError(f"geocompact exited 0 but its output is not JSON: {out[:200]!r}",
                           exit_code=0, stderr="\n".join(other), argv=argv) from None


#: Seconds a stopped command has to clean up (remove the files it wrote,
#: release its lease) after SIGTERM before it is killed.
STOP_GRACE = 30.0


def stop(proc: subprocess.Popen[str], grace: float = STOP_GRACE) -> None:
    """Stops a running command: SIGTERM, which the binary handles by
    cancelling its work and removing what it wrote, then SIGKILL when it
    is still running after ``grace`` seconds or when stopping is itself
    interrupted."""
    if proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(timeout=grace)
    except BaseException:
        proc.kill()
        proc.wait()
        raise


def _json_or_none(out: str) -> Any:
    try:
        return json.loads(out) if out.strip() else None
    except ValueError:
        return None


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
        return fn
    except (OSError, AttributeError):
        return None


# Loaded once here: the child calls it between fork and exec, where loading
# a library is not safe.
_prctl = _load_prctl()
_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent: int = os.getpid()) -> None:
    """Runs in the child before exec (Linux): the kernel sends it SIGTERM
    when the process that started it dies, so a killed Python leaves no
    command running. A parent that died before this call is caught by the
    parent id check."""
    assert _prctl is not None
    _prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


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
