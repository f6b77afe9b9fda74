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
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ._binary import find_binary
from ._jobs import JobRewrite, RunUnits, Work, annotate, batches, run_job
from .errors import GeocompactError
from .results import RewriteResult

#: Called on the driver after every unit's result is in, before the
#: commit (tests stop the driver or change the table there).
_before_commit: Callable[[], None] | None = None

#: A rewrite run on Spark: its result and what every unit's successful
#: attempt reported (``job``, ``group``, ``rows``, ``files_out``,
#: ``start``, ``end``, ``pid``, ``host`` and ``peak_rss_bytes`` (Linux) of
#: the geocompact process, ``executor``: the pid of the process that
#: started the task's Python worker, one per executor, and ``attempt``:
#: Spark's attempt number).
SparkRewrite = JobRewrite


def rewrite(spark: Any, table: str, **kwargs: Any) -> RewriteResult:
    """Compacts ``table`` on the cluster of ``spark`` (a SparkSession)
    with the keyword arguments of :func:`geocompact.rewrite` (``curve``,
    ``strategy``, ``sort_order``, ``where``, ``options``, ``windows``,
    ``allow_layout_change``, ``dry_run``, ``catalog``, ``catalog_name``,
    ``warehouse``, ``config``, ``logger``, ``env``, ``timeout``) plus
    ``ship_binary``, ``shuffle`` (which sorted groups over a worker's
    memory budget are spread over the executors in stages: ``"auto"``,
    the default, one that holds more than its share of the rows for
    ``defaultParallelism`` tasks at once; ``"always"``; ``"never"``, one
    executor rewrites each group, spilling to its disk) and ``api``: ``"rdd"`` (the default: one task per
    unit through ``parallelize(...).mapPartitions``) or ``"dataframe"``
    (a DataFrame of the units through ``mapInPandas``, for clusters that
    restrict the RDD API, such as Databricks' shared access mode; the
    binary must then be installed on the workers, as the wheel installs
    it, since ``ship_binary`` needs ``SparkContext.addFile``). Raises
    :class:`~geocompact.CommitConflict` when
    another writer changed the planned files (plan again), and the error
    of the failing step otherwise; a failed rewrite commits nothing and
    leaves none of its files.

    >>> geocompact.spark.rewrite(spark, "gis.pings", curve="hilbert").added_data_files_count
    12
    """
    return run(spark, table, **kwargs).result


def run(spark: Any, table: str, *, progress: Any = None, api: str = "rdd", **kwargs: Any) -> JobRewrite:
    """Does what :func:`rewrite` does and also returns every unit's report."""
    del progress  # the executors' logs stay on the executors
    if api == "rdd":
        units = _units_on(spark)
    elif api == "dataframe":
        if kwargs.get("ship_binary"):
            raise ValueError("api='dataframe' takes no ship_binary: install the wheel (or the binary, named by "
                             "GEOCOMPACT_BINARY) on the workers")
        units = _units_in_dataframe(spark)
    else:
        raise ValueError(f"api {api!r}: want 'rdd' or 'dataframe'")
    return run_job(table, units, before_commit=_before_commit, workers=spark.sparkContext.defaultParallelism,
                   **kwargs)


def _units_on(spark: Any) -> RunUnits:
    """Runs units as Spark tasks (see batches)."""

    added: set[str] = set()

    def run_units(units: list[str], work: Work, ship: str | None) -> list[str]:
        sc = spark.sparkContext
        if ship is not None and ship not in added:  # once, though stages call again
            sc.addFile(ship)  # keeps the exec bit
            added.add(ship)
        shipped = os.path.basename(ship) if ship is not None else None
        # A unit gets the cores Spark counts for its task, not the node's:
        # the Go worker's memory limit leaves room for one file being
        # written per core it uses.
        work = work.with_env({"GOMAXPROCS": sc.getConf().get("spark.task.cpus", "1")})

        def task(it: Iterator[list[str]]) -> Iterator[str]:
            return iter(_work([u for batch in it for u in batch], work, shipped))

        tasks = batches(units, sc.defaultParallelism)
        return [str(line) for line in sc.parallelize(tasks, len(tasks)).mapPartitions(task).collect()]

    return run_units


def _units_in_dataframe(spark: Any) -> RunUnits:
    """Runs units through a DataFrame of one unit per row, repartitioned
    one row per partition, each partition's units run by mapInPandas: the
    DataFrame API only, as restricted clusters allow."""

    def run_units(units: list[str], work: Work, ship: str | None) -> list[str]:
        del ship  # refused by run
        cpus = spark.conf.get("spark.task.cpus", "1") or "1"
        work = work.with_env({"GOMAXPROCS": cpus})

        def task(batches: Iterator[Any]) -> Iterator[Any]:
            import pandas as pd

            for b in batches:
                yield pd.DataFrame({"result": _work([str(u) for u in b["unit"]], work, None)}, dtype=str)

        tasks = batches(units, spark.sparkContext.defaultParallelism)
        df = spark.createDataFrame([(u,) for t in tasks for u in t], "unit string").repartition(len(tasks))
        return [str(r["result"]) for r in df.mapInPandas(task, "result string").collect()]

    return run_units


def _work(units: list[str], work: Work, shipped: str | None) -> list[str]:
    """Runs on an executor: the units, then where the attempt ran (its
    attempt number and the process that started its Python worker, one
    per executor)."""
    if not units:
        return []
    if shipped is not None:
        from pyspark import SparkFiles

        binary = SparkFiles.get(shipped)
    else:
        binary = find_binary()
    lines = work.run(units, binary)
    where: dict[str, Any] = {"executor": os.getppid()}
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None:
            where["attempt"] = ctx.attemptNumber()
    except ImportError:
        pass
    return annotate(lines, where)


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
    p.add_argument("--shuffle", choices=("auto", "always", "never"), default="auto",
                   help="which sorted groups over the memory budget are spread across the executors")
    p.add_argument("--api", choices=("rdd", "dataframe"), default="rdd",
                   help="run the units through the RDD API (default) or a DataFrame's mapInPandas")
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
                      dry_run=a.dry_run, catalog=a.catalog, warehouse=a.warehouse, config=a.config,
                      ship_binary=a.ship_binary, shuffle=a.shuffle, api=a.api)
    except ValueError as e:  # arguments that contradict each other
        print(f"geocompact: {e}", file=sys.stderr)
        return 2
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
