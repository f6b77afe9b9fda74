"""A rewrite as units of work on a distributed engine, whatever the engine:
the driver plans (``geocompact job plan``), the engine runs the units
(``geocompact job work`` on its workers), the driver commits the results of
the successful attempts (``geocompact job commit``) or, on any failure,
aborts (``geocompact job abort``). geocompact.spark and geocompact.ray give
it their engine's way of running the units; nothing else differs."""

from __future__ import annotations

import json
import logging
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ._binary import find_binary
from ._run import Catalog, catalog_env
from ._scratch import scratch_dir
from .errors import GeocompactError, error_for
from .results import RewriteResult, from_json

_log = logging.getLogger("geocompact")


@dataclass(frozen=True)
class Work:
    """What a worker needs to run units of a job: the job's line (what
    plan printed first), the global flags that reach the catalog, and the
    environment to add to the worker's own (the caller's ``env`` and a
    catalog object's properties)."""

    job_line: str
    flags: list[str]
    env: dict[str, str] = field(default_factory=dict)

    def with_env(self, extra: Mapping[str, str]) -> Work:
        """This work with extra under its environment (its own wins)."""
        return replace(self, env={**extra, **self.env})

    def run(self, units: Sequence[str], binary: str) -> list[str]:
        """Runs ``geocompact job work`` on units with binary and returns
        its result lines; a non-zero exit raises, so that the engine fails
        (and retries) the task."""
        if not units:
            return []
        child_env = dict(os.environ)
        child_env.update(self.env)
        with scratch_dir("geocompact-work-") as tmp:
            job_file = os.path.join(tmp, "job.json")
            with open(job_file, "w") as f:
                f.write(self.job_line + "\n")
            out = call([binary, *self.flags, "job", "work", "--job", job_file], child_env,
                       stdin="\n".join(units) + "\n")
        return [line for line in out.splitlines() if line.strip()]


def batches(units: Sequence[str], slots: int) -> list[list[str]]:
    """Deals units into tasks: one unit per task while they are few (at
    most two per slot, the tasks the engine runs at once), else two
    batches per slot, since a task starts one worker process, which opens
    the job once for all its units (a shuffled group's stages have a unit
    per input file)."""
    n = min(len(units), 2 * max(1, slots))
    return [list(units[i::n]) for i in range(n)]


#: How an engine runs units: (units, work, the driver's binary to ship to
#: the workers or None) -> the result lines of the successful attempts.
RunUnits = Callable[[list[str], Work, "str | None"], list[str]]

#: The keys of a unit's report: what work printed of where and when it ran,
#: and what the engine added (``executor``, ``attempt``, ``node``).
REPORT_KEYS = ("job", "group", "kind", "file", "bucket", "rows", "files_out", "shuffle_bytes", "start", "end", "pid", "host",
               "peak_rss_bytes", "executor", "attempt", "node")


@dataclass(frozen=True)
class JobRewrite:
    """A rewrite run as units of work: its result and what every unit's
    successful attempt reported (see :data:`REPORT_KEYS`)."""

    result: RewriteResult
    units: list[dict[str, Any]]


def run_job(
    table: str,
    run_units: RunUnits,
    *,
    curve: str | None = None,
    strategy: str | None = None,
    sort_order: str | None = None,
    where: str | None = None,
    options: Mapping[str, Any] | None = None,
    windows: str | os.PathLike[str] | None = None,
    allow_layout_change: bool = False,
    dry_run: bool = False,
    catalog: Catalog | None = None,
    catalog_name: str = "default",
    warehouse: str | os.PathLike[str] | None = None,
    config: str | os.PathLike[str] | None = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    ship_binary: bool = False,
    shuffle: str = "auto",
    workers: int = 1,
    before_commit: Callable[[], None] | None = None,
) -> JobRewrite:
    """Plans the rewrite of table, runs its units with run_units and
    commits them, as :func:`geocompact.rewrite` would rewrite it; a dry
    run is the local engine's. shuffle says which sorted groups larger than
    a worker's memory budget are spread over the workers in stages
    (scatter, bucket, span; each stage's units run once the stage before is
    done): "auto", one that holds more than its share of the rows for
    workers (the units the engine runs at once), "always" or "never" (one
    worker rewrites each group, spilling to its disk). before_commit runs on the driver once every result is in (tests stop
    the driver or change the table there)."""
    if shuffle not in ("auto", "always", "never"):
        raise ValueError(f"shuffle {shuffle!r}: want 'auto', 'always' or 'never'")
    log = logger or _log
    if dry_run:
        from .api import rewrite as local_rewrite

        return JobRewrite(local_rewrite(table, curve=curve, strategy=strategy, sort_order=sort_order, where=where,
                                        options=options, windows=windows, allow_layout_change=allow_layout_change,
                                        dry_run=True, catalog=catalog, catalog_name=catalog_name,
                                        warehouse=warehouse, config=config, logger=logger, env=env,
                                        timeout=timeout), [])
    plan_args = ["job", "plan", "--table", table]
    for flag, value in (("--curve", curve), ("--strategy", strategy), ("--sort-order", sort_order), ("--where", where)):
        if value is not None:
            plan_args += [flag, value]
    if windows is not None:
        plan_args += ["--windows", os.fspath(windows)]
    for k, v in (options or {}).items():
        if isinstance(v, bool):
            v = "true" if v else "false"
        plan_args += ["--option", f"{k}={v}"]
    if allow_layout_change:
        plan_args.append("--allow-layout-change")
    plan_args += ["--shuffle", shuffle, "--workers", str(max(1, workers))]

    flags, cat_env = _globals(catalog, catalog_name, warehouse, config)
    child_env = {**os.environ, **(env or {}), **cat_env}
    binary = find_binary()
    lines = [line for line in call([binary, *flags, *plan_args], child_env, timeout=timeout).splitlines()
             if line.strip()]
    if not lines:
        raise error_for(1)("job plan printed no job", exit_code=1)
    job_line, units = lines[0], lines[1:]
    job_doc = json.loads(job_line)
    job_id, staged = job_doc["id"], bool(job_doc.get("shuffled"))
    with scratch_dir("geocompact-job-") as tmp:
        job_file = os.path.join(tmp, "job.json")
        with open(job_file, "w") as f:
            f.write(job_line + "\n")
        results: list[str] = []
        try:
            if units:
                log.info("job planned job_id=%s units=%d", job_id, len(units))
                work = Work(job_line, flags, {**(env or {}), **cat_env})
                ship = binary if ship_binary else None
                results = run_units(units, work, ship)
                while staged:
                    units = [line for line in call([binary, *flags, "job", "next", "--job", job_file], child_env,
                                                   stdin="\n".join(results) + "\n", timeout=timeout).splitlines()
                             if line.strip()]
                    if not units:
                        break
                    log.info("job stage job_id=%s kind=%s units=%d", job_id, json.loads(units[0]).get("kind"),
                             len(units))
                    results += run_units(units, work, ship)
            if before_commit is not None:
                before_commit()
            doc = json.loads(call([binary, *flags, "--json", "job", "commit", "--job", job_file], child_env,
                                  stdin="\n".join(results) + "\n", timeout=timeout))
        except BaseException:
            try:
                call([binary, *flags, "job", "abort", "--job", job_file], child_env, timeout=timeout)
            except GeocompactError as e:
                log.warning("abort job %s: %s", job_id, e)
            raise
    return JobRewrite(from_json(RewriteResult, doc), [report(r) for r in results])


def _globals(
    catalog: Catalog | None,
    catalog_name: str,
    warehouse: str | os.PathLike[str] | None,
    config: str | os.PathLike[str] | None,
) -> tuple[list[str], dict[str, str]]:
    """Returns the global flags and the environment that reach the catalog
    as geocompact.rewrite reaches it: a catalog object or dict alone, its
    properties in the environment, never on a command line."""
    flags: list[str] = []
    if warehouse is not None:
        flags += ["--warehouse", os.fspath(warehouse)]
    if config is not None:
        flags += ["--config", os.fspath(config)]
    if isinstance(catalog, str):
        return flags + ["--catalog", catalog], {}
    if catalog is not None:
        return flags + ["--catalog-from-env"], catalog_env(catalog, catalog_name)
    return flags, {}


def call(argv: Sequence[str], env: Mapping[str, str], *, stdin: str | None = None, timeout: float | None = None) -> str:
    """Runs argv and returns its stdout; a non-zero exit raises the error
    of its code with the last line of stderr."""
    p = subprocess.run(list(argv), input=stdin if stdin is not None else "", capture_output=True, text=True,
                       env=dict(env), timeout=timeout)
    if p.returncode != 0:
        lines = [line.removeprefix("geocompact: ") for line in p.stderr.splitlines() if line.strip()]
        doc = None
        try:
            doc = json.loads(p.stdout) if p.stdout.strip() else None
        except ValueError:
            pass
        raise error_for(p.returncode)(lines[-1] if lines else f"exit {p.returncode}", exit_code=p.returncode,
                                      stderr=p.stderr, argv=list(argv), result=doc)
    return p.stdout


def report(line: str) -> dict[str, Any]:
    """A unit's report from its result line."""
    r = json.loads(line)
    return {k: r.get(k) for k in REPORT_KEYS if k in r}


def annotate(lines: Sequence[str], where: Mapping[str, Any]) -> list[str]:
    """The result lines with where (the engine's view of the attempt)
    added."""
    return [json.dumps({**json.loads(line), **where}) for line in lines]
