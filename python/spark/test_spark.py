"""The rewrite on a real Spark cluster (local-cluster[2,1,1024]: a driver
and two executor JVMs, one core each): run by python/spark/test_spark.sh.

(a) units of two executors overlap in time; (b) a worker killed after its
unit wrote its files: one snapshot, the output of `geocompact rewrite` on a
twin table, no file of the killed attempt left; (c) a driver killed before
its commit: a rerun commits and sweeps what the killed job left; (d) a
conflicting writer between plan and commit: CommitConflict, nothing
committed, nothing of the job left; (f) the DataFrame path; (e)
spark-submit; (g) one group over the workers' budget spread over both
executors in stages, a scatter worker killed. The cases (b)-(d) and (g) are python/clusters/cases.py's, shared
with the Ray test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clusters"))

import cases  # noqa: E402
from cases import OPTS, Lake  # noqa: E402

import geocompact  # noqa: E402
import geocompact.spark as gs  # noqa: E402
import geocompact.spark_submit  # noqa: E402

LAKE = Lake("geocompact-spark-test-")


def runner(spark: Any) -> Any:
    def run(table: str, **kw: Any) -> Any:
        return gs.run(spark, table, curve="hilbert", **{"options": OPTS, **kw}, warehouse=LAKE.wh, config=LAKE.cfg,
                      ship_binary=True)

    return run


def case_overlap(spark: Any) -> None:
    # Two whole groups (not shuffled) of over a second each, so that a
    # task handed to the second executor a little late still overlaps.
    LAKE.generate("geo.a", 1_000_000)
    r = runner(spark)("geo.a", shuffle="never")
    assert r.result.verified and r.result.added_data_files_count == 2, r.result
    a, b = r.units
    assert a["executor"] != b["executor"], f"both units ran on one executor: {r.units}"
    t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    overlap = min(t(a["end"]), t(b["end"])) - max(t(a["start"]), t(b["start"]))
    assert overlap.total_seconds() > 0, f"units did not overlap: {r.units}"
    print(f"(a) two units overlapped {overlap.total_seconds():.2f}s on executors {a['executor']} and {b['executor']}")


def case_killed_worker(spark: Any) -> None:
    # The geocompact process itself is killed: its task fails and Spark
    # retries it.
    k = cases.case_killed_worker(LAKE, runner(spark), victim=lambda pid: pid)
    assert any(u["attempt"] >= 1 for u in k["run"].units), f"no unit was retried: {k['run'].units}"
    print(f"(b) worker {k['pid']} killed after writing {len(k['lost'])} file(s): retried, one snapshot, "
          "output equal to the local rewrite's, its files deleted")


def case_shuffled(spark: Any) -> None:
    k = cases.case_shuffled(LAKE, runner(spark), victim=lambda pid: pid)
    scatter = [u for u in k["run"].units if u["kind"] == "scatter"]
    assert len({u["executor"] for u in scatter}) == 2, f"the scatter stage ran on one executor: {scatter}"
    assert any(u["attempt"] >= 1 for u in scatter), "the killed scatter unit was not retried"
    print(f"(g) one group over the budget in stages {dict(k['kinds'])} on two executors, a scatter worker "
          "killed: retried, one snapshot, the local rewrite's files, no shuffle file left")


DRIVER = r"""
import os, signal, sys
from pyspark.sql import SparkSession
import geocompact.spark as gs
spark = (SparkSession.builder.master("local[2]").appName("killed driver")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
gs._before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
gs.run(spark, "geo.c", curve="hilbert", options={"min-input-files": 2}, warehouse=sys.argv[1], config=sys.argv[2])
"""


def case_killed_driver(spark: Any) -> None:
    dead = cases.case_killed_driver(LAKE, runner(spark), DRIVER)
    print(f"(c) driver killed before its commit: the rerun committed and swept job {dead}")


def case_conflict(spark: Any) -> None:
    cases.case_conflict(LAKE, runner(spark), gs)
    print("(d) a conflicting writer: CommitConflict (exit 4), nothing committed, the job's files deleted")


def case_dataframe(spark: Any) -> None:
    """api='dataframe': the units through a DataFrame's mapInPandas (the
    binary found on the workers, as an installed wheel provides it): one
    snapshot, the local rewrite's output; ship_binary with it is refused."""
    LAKE.twin("geo.f", 60_000, seed=5)
    before = LAKE.snapshots("geo.f")
    try:
        gs.run(spark, "geo.f", api="dataframe", ship_binary=True, warehouse=LAKE.wh, config=LAKE.cfg)
    except ValueError as e:
        assert "ship_binary" in str(e), e
    else:
        raise AssertionError("api='dataframe' took ship_binary")
    r = gs.run(spark, "geo.f", curve="hilbert", options=OPTS, warehouse=LAKE.wh, config=LAKE.cfg, api="dataframe")
    assert r.result.verified and r.result.snapshots_committed == 1, r.result
    assert len({u["group"] for u in r.units}) == 2, r.units
    assert LAKE.snapshots("geo.f") == before + 1
    assert LAKE.content("geo.f") == LAKE.content("geo.f_twin"), "output differs from the local rewrite of the twin"
    print("(f) api='dataframe' (mapInPandas): one snapshot, output equal to the local rewrite's")


def case_spark_submit(spark: Any) -> None:
    """spark-submit of geocompact/spark_submit.py with the CLI's flags and
    exit codes (its own driver, local[1])."""
    del spark
    LAKE.generate("geo.e", 20_000)
    submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    head = [submit, "--master", "local[1]", "--conf", "spark.ui.enabled=false", geocompact.spark_submit.__file__]
    where = ["--warehouse", LAKE.wh, "--config", LAKE.cfg]
    argv = [*head, "--table", "geo.e", "--curve", "hilbert", "--option", "min-input-files=2", *where, "--json"]
    p = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, f"spark-submit exited {p.returncode}: {p.stderr[-2000:]}"
    doc = json.loads(p.stdout[p.stdout.index("{"):])
    assert doc["verified"] and doc["snapshots_committed"] == 1, doc
    p = subprocess.run([*head, "--table", "geo.nope", *where], capture_output=True, text=True, timeout=180)
    assert p.returncode == 1 and "geo.nope" in p.stderr, f"exit {p.returncode}: {p.stderr[-2000:]}"
    print("(e) spark-submit geocompact/spark_submit.py: exit 0 with the verified result; a missing table exits 1")


def main() -> None:
    from pyspark.sql import SparkSession

    os.environ["GEOCOMPACT_WAREHOUSE"] = LAKE.wh
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("geocompact spark test")
             .config("spark.task.maxFailures", "4")
             .config("spark.executorEnv.PYTHONPATH", os.environ.get("PYTHONPATH", ""))
             .config("spark.executorEnv.GEOCOMPACT_BINARY", LAKE.bin)
             .config("spark.executor.memory", "512m")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    # Both executors up before the first job, or its tasks queue on one.
    status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus
    deadline = time.time() + 120
    while status().size() < 3:  # the driver and two executors
        assert time.time() < deadline, "the two executors did not register"
        time.sleep(0.2)
    try:
        cases.run_cases({c.__name__: (lambda c=c: c(spark)) for c in (
            case_overlap, case_killed_worker, case_shuffled, case_killed_driver, case_conflict, case_dataframe,
            case_spark_submit)})
    finally:
        spark.stop()
    print("spark: all cases passed")


if __name__ == "__main__":
    main()
