"""Rewriting a table on Apache Spark: the driver plans, the executors run
the units of work, the driver commits.

:func:`rewrite` takes the arguments of :func:`geocompact.rewrite` plus a
SparkSession and returns the same :class:`~geocompact.RewriteResult`. It
runs ``geocompact job plan`` on the driver, one Spark task per unit (a file
group, rewritten whole by ``geocompact job work`` in a subprocess of the
executor's Python worker), collects the results of the successful attempts
and runs ``geocompact job commit`` on the driver; on failure,
``geocompact job abort``. A task Spark retries writes fresh files, and the
commit deletes those of the attempts whose results it did not keep.

Executors need the geocompact binary (the wheel installed on them, or
``ship_binary=True`` to ship the driver's through ``SparkContext.addFile``),
read access to the catalog and read/write access to the table's storage.
The Go worker's memory is outside the JVM's heap: give it room with
``spark.executor.memoryOverhead`` (see docs/scale-out.md).

``python -m geocompact.spark`` (or ``spark-submit`` of
``geocompact/spark_submit.py``) takes the
flags of ``geocompact rewrite`` and exits as it does: 0 done, 1 error,
2 usage, 4 commit conflict.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._binary import find_binary
from ._run import Catalog, catalog_env
from .errors import GeocompactError, error_for
from .results import RewriteResult, from_json

_log = logging.getLogger("geocompact")

#: Called on the driver after every unit's result is in, before the
#: commit (tests stop the driver or change the table there).
_before_commit: Callable[[], None] | None = None


@dataclass(frozen=True)
class SparkRewrite:
    """A rewrite run on Spark: its result and what every unit's
    successful attempt reported (``job``, ``group``, ``rows``,
    ``files_out``, ``start``, ``end``, ``pid``, ``host`` and
    ``peak_rss_bytes`` (Linux) of the geocompact process, ``executor``:
    the pid of the process that started
    the task's Python worker, one per executor, and ``attempt``: Spark's
    attempt number)."""

    result: RewriteResult
    units: list[dict[str, Any]]


def rewrite(spark: Any, table: str, **kwargs: Any) -> RewriteResult:
    """Compacts ``table`` on the cluster of ``spark`` (a SparkSession)
    with the keyword arguments of :func:`geocompact.rewrite` (``curve``,
    ``strategy``, ``sort_order``, ``where``, ``options``, ``windows``,
    ``allow_layout_change``, ``dry_run``, ``catalog``, ``catalog_name``,
    ``warehouse``, ``config``, ``logger``, ``env``, ``timeout``) plus
    ``ship_binary``. Raises :class:`~geocompact.CommitConflict` when
    another writer changed the planned files (plan again), and the error
    of the failing step otherwise; a failed rewrite commits nothing and
    leaves none of its files.

    >>> geocompact.spark.rewrite(spark, "gis.pings", curve="hilbert").added_data_files_count
    12
    """
    return run(spark, table, **kwargs).result


def run(
    spark: Any,
    table: str,
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
    progress: Any = None,
    logger: logging.Logger | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    ship_binary: bool = False,
) -> SparkRewrite:
    """Does what :func:`rewrite` does and also returns every unit's report."""
    del progress  # the executors' logs stay on the executors
    log = logger or _log
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
    if dry_run:
        from .api import rewrite as local_rewrite

        return SparkRewrite(local_rewrite(table, curve=curve, strategy=strategy, sort_order=sort_order, where=where,
                                          options=options, windows=windows, allow_layout_change=allow_layout_change,
                                          dry_run=True, catalog=catalog, catalog_name=catalog_name,
                                          warehouse=warehouse, config=config, logger=logger, env=env,
                                          timeout=timeout), [])
    flags, child_env = _globals(catalog, catalog_name, warehouse, config, env)
    binary = find_binary()
    out = _call([binary, *flags, *plan_args], child_env, timeout=timeout)
    lines = [line for line in out.splitlines() if line.strip()]
    if not lines:
        raise error_for(1)("job plan printed no job", exit_code=1)
    job_line, units = lines[0], lines[1:]
    job_id = json.loads(job_line)["id"]
    with tempfile.TemporaryDirectory(prefix="geocompact-spark-") as tmp:
        job_file = os.path.join(tmp, "job.json")
        with open(job_file, "w") as f:
            f.write(job_line + "\n")
        results: list[str] = []
        try:
            if units:
                log.info("job planned job_id=%s units=%d", job_id, len(units))
                results = _run_units(spark, units, job_line, flags, dict(env or {}), catalog, catalog_name,
                                     binary if ship_binary else None)
            if _before_commit is not None:
                _before_commit()
            doc = json.loads(_call([binary, *flags, "--json", "job", "commit", "--job", job_file], child_env,
                                   stdin="\n".join(results) + "\n", timeout=timeout))
        except BaseException:
            try:
                _call([binary, *flags, "job", "abort", "--job", job_file], child_env, timeout=timeout)
            except GeocompactError as e:
                log.warning("abort job %s: %s", job_id, e)
            raise
    return SparkRewrite(from_json(RewriteResult, doc), [_report(r) for r in results])


def _globals(
    catalog: Catalog | None,
    catalog_name: str,
    warehouse: str | os.PathLike[str] | None,
    config: str | os.PathLike[str] | None,
    env: Mapping[str, str] | None,
) -> tuple[list[str], dict[str, str]]:
    """Returns the global flags and the environment that reach the catalog
    as geocompact.rewrite reaches it (catalog properties travel in the
    environment, never on a command line)."""
    flags: list[str] = []
    child_env = dict(os.environ)
    child_env.update(env or {})
    if warehouse is not None:
        flags += ["--warehouse", os.fspath(warehouse)]
    if config is not None:
        flags += ["--config", os.fspath(config)]
    if isinstance(catalog, str):
        flags += ["--catalog", catalog]
    elif catalog is not None:
        # Used alone, as geocompact.rewrite uses it: no configuration of
        # the same name is read or merged in.
        child_env.update(catalog_env(catalog, catalog_name))
        flags.append("--catalog-from-env")
    return flags, child_env


def _call(argv: Sequence[str], env: Mapping[str, str], *, stdin: str | None = None, timeout: float | None = None) -> str:
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


def _run_units(
    spark: Any,
    units: list[str],
    job_line: str,
    flags: list[str],
    env: dict[str, str],
    catalog: Catalog | None,
    catalog_name: str,
    ship: str | None,
) -> list[str]:
    """Runs one Spark task per unit and returns the result lines of the
    successful attempts."""
    sc = spark.sparkContext
    if ship is not None:
        sc.addFile(ship)  # keeps the exec bit
    cat_env: dict[str, str] = {}
    if catalog is not None and not isinstance(catalog, str):
        cat_env = catalog_env(catalog, catalog_name)
    shipped = os.path.basename(ship) if ship is not None else None
    # A unit gets the cores Spark counts for its task, not the node's:
    # the Go worker's memory limit leaves room for one file being written
    # per core it uses.
    cores = {"GOMAXPROCS": sc.getConf().get("spark.task.cpus", "1")}
    work_env = {**cores, **env, **cat_env}

    def run_units(it: Iterator[str]) -> Iterator[str]:
        return _work(list(it), job_line, flags, work_env, shipped)

    return [str(line) for line in sc.parallelize(units, len(units)).mapPartitions(run_units).collect()]


def _work(units: list[str], job_line: str, flags: list[str], env: Mapping[str, str], shipped: str | None) -> Iterator[str]:
    """Runs on an executor: ``geocompact job work`` on units, raising on a
    non-zero exit so that Spark fails (and retries) the task."""
    if not units:
        return iter(())
    if shipped is not None:
        from pyspark import SparkFiles

        binary = SparkFiles.get(shipped)
    else:
        binary = find_binary()
    child_env = dict(os.environ)
    child_env.update(env)
    with tempfile.TemporaryDirectory(prefix="geocompact-work-") as tmp:
        job_file = os.path.join(tmp, "job.json")
        with open(job_file, "w") as f:
            f.write(job_line + "\n")
        out = _call([binary, *flags, "job", "work", "--job", job_file], child_env, stdin="\n".join(units) + "\n")
    # Where the attempt ran: the task's attempt number and the process
    # that started its Python worker (one per executor).
    where: dict[str, Any] = {"executor": os.getppid()}
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None:
            where["attempt"] = ctx.attemptNumber()
    except ImportError:
        pass
    return iter([json.dumps({**json.loads(line), **where}) for line in out.splitlines() if line.strip()])


def _report(line: str) -> dict[str, Any]:
    r = json.loads(line)
    keys = ("job", "group", "rows", "files_out", "start", "end", "pid", "host", "peak_rss_bytes", "executor",
            "attempt")
    return {k: r.get(k) for k in keys}


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m geocompact.spark",
                                description="Rewrite a table on Spark with the flags of geocompact rewrite.")
    p.add_argument("--table", required=True, help="table to rewrite, NAMESPACE.TABLE")
    p.add_argument("--curve")
    p.add_argument("--strategy")
    p.add_argument("--sort-order")
    p.add_argument("--where")
    p.add_argument("--option", action="append", default=[], metavar="K=V")
    p.add_argument("--windows")
    p.add_argument("--allow-layout-change", action="store_true")
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--warehouse")
    p.add_argument("--catalog")
    p.add_argument("--config")
    p.add_argument("--json", action="store_true", help="write the result as JSON")
    p.add_argument("--ship-binary", action="store_true", help="ship this machine's binary to the executors")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """The entry point of ``python -m geocompact.spark``: returns the exit
    code of geocompact rewrite."""
    try:
        a = _parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:
        return 2 if e.code else 0
    options: dict[str, str] = {}
    for kv in a.option:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            print(f"geocompact: --option {kv!r}: want K=V", file=sys.stderr)
            return 2
        options[k] = v
    from pyspark.sql import SparkSession

    spark = SparkSession.builder.appName(f"geocompact rewrite {a.table}").getOrCreate()
    try:
        res = rewrite(spark, a.table, curve=a.curve, strategy=a.strategy, sort_order=a.sort_order, where=a.where,
                      options=options, windows=a.windows, allow_layout_change=a.allow_layout_change,
                      dry_run=a.dry_run, catalog=a.catalog, warehouse=a.warehouse, config=a.config)
    except GeocompactError as e:
        print(f"geocompact: {e}", file=sys.stderr)
        return e.exit_code or 1
    except Exception as e:  # a Spark job that failed: the task's error is in e
        print(f"geocompact: {e}", file=sys.stderr)
        return 1
    finally:
        spark.stop()
    if a.json:
        json.dump(res.raw or {}, sys.stdout, indent=2)
        print()
    else:
        print(f"rewrote {res.rewritten_data_files_count} files into {res.added_data_files_count} "
              f"(verified: {str(res.verified).lower()}); files before {res.files_before}, after {res.files_after}")
    return 0


__all__ = ["SparkRewrite", "rewrite", "run", "main"]

if __name__ == "__main__":
    sys.exit(main())
