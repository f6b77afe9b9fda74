"""The rewrite on a real Spark cluster (local-cluster[2,1,1024]: a driver
and two executor JVMs, one core each): run by python/spark/test_spark.sh.

(a) units of two executors overlap in time; (b) a worker killed after its
unit wrote its files: one snapshot, the output of `geocompact rewrite` on a
twin table, no file of the killed attempt left; (c) a driver killed before
its commit: a rerun commits and sweeps what the killed job left; (d) a
conflicting writer between plan and commit: CommitConflict, nothing
committed, nothing of the job left.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime

import geocompact
import geocompact.spark as gs
import geocompact.spark_submit

BIN = os.environ["GEOCOMPACT_BINARY"]
WORK = tempfile.mkdtemp(prefix="geocompact-spark-test-")
WH = os.path.join(WORK, "warehouse")
CFG = os.path.join(WORK, "geocompact.yaml")
with open(CFG, "w") as f:
    f.write("{}\n")
OPTS = {"min-input-files": 2}


def gc(*args: str) -> str:
    p = subprocess.run([BIN, "--warehouse", WH, "--config", CFG, *args], capture_output=True, text=True)
    assert p.returncode == 0, f"geocompact {' '.join(args)}: exit {p.returncode}: {p.stderr}"
    return p.stdout


def generate(table: str, rows: int, seed: int = 1) -> None:
    gc("generate", "--table", table, "--rows", str(rows), "--commits", "8", "--partition-by", "bucket(2, id)",
       "--seed", str(seed))


def snapshots(table: str) -> int:
    return len(json.loads(gc("inspect", "snapshots", "--table", table, "--json")))


def live(table: str) -> list[str]:
    return [f["file_path"].removeprefix("file://") for f in json.loads(gc("inspect", "files", "--table", table, "--json"))]


def table_dir(table: str) -> str:
    ns, name = table.split(".")
    return os.path.join(WH, ns + ".db", name)


def files_under(table: str, part: str) -> list[str]:
    out = []
    for d, _, names in os.walk(table_dir(table)):
        out += [os.path.join(d, n) for n in names if part in n]
    return out


def tag(job_id: str) -> str:
    return f"{job_id[:8]}-{job_id[8:12]}-{job_id[12:16]}-"


def content(table: str) -> Counter:
    """The multiset of the md5s of the live data files."""
    return Counter(hashlib.md5(open(p, "rb").read()).hexdigest() for p in live(table))


def run(spark, table: str, **kw):
    return gs.run(spark, table, curve="hilbert", options=OPTS, warehouse=WH, config=CFG, ship_binary=True, **kw)


def case_overlap(spark) -> None:
    generate("geo.a", 200_000)
    r = run(spark, "geo.a")
    assert r.result.verified and r.result.added_data_files_count == 2, r.result
    a, b = r.units
    assert a["executor"] != b["executor"], f"both units ran on one executor: {r.units}"
    t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    overlap = min(t(a["end"]), t(b["end"])) - max(t(a["start"]), t(b["start"]))
    assert overlap.total_seconds() > 0, f"units did not overlap: {r.units}"
    print(f"(a) two units overlapped {overlap.total_seconds():.2f}s on executors {a['executor']} and {b['executor']}")


def case_killed_worker(spark) -> None:
    generate("geo.b", 60_000, seed=7)
    generate("geo.b_twin", 60_000, seed=7)
    gc("rewrite", "--table", "geo.b_twin", "--curve", "hilbert", "--option", "min-input-files=2")
    before = snapshots("geo.b")
    pause = os.path.join(WORK, "pause")
    killed: dict[str, object] = {}

    def killer() -> None:
        while not os.path.exists(pause) or not open(pause).read():
            time.sleep(0.05)
        pid = int(open(pause).read())
        time.sleep(0.2)
        # The files the paused attempt wrote: its job's tagged data files.
        killed["files"] = [p for p in files_under("geo.b", ".parquet") if "/data/" in p]
        killed["pid"] = pid
        os.kill(pid, signal.SIGKILL)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    r = run(spark, "geo.b", env={"GEOCOMPACT_TEST_JOB_PAUSE_FILE": pause})
    th.join(5)
    assert "pid" in killed, "no worker paused"
    assert all(u["pid"] != killed["pid"] for u in r.units), "the killed attempt's result was committed"
    assert any(u["attempt"] >= 1 for u in r.units), f"no unit was retried: {r.units}"
    assert snapshots("geo.b") == before + 1, "want exactly one new snapshot"
    assert content("geo.b") == content("geo.b_twin"), "output differs from geocompact rewrite on the twin table"
    job = r.units[0]["job"]
    lost = [p for p in killed["files"] if tag(job) in p and p not in live("geo.b")]
    assert lost, f"the killed attempt wrote no file: {killed['files']}"
    left = [p for p in files_under("geo.b", tag(job)) if p not in live("geo.b")]
    assert not left and not any(os.path.exists(p) for p in lost), f"files of the killed attempt left: {left or lost}"
    print(f"(b) worker {killed['pid']} killed after writing {len(lost)} file(s): retried, one snapshot, "
          "output equal to the local rewrite's, its files deleted")


DRIVER = r"""
import os, signal, sys
from pyspark.sql import SparkSession
import geocompact.spark as gs
spark = (SparkSession.builder.master("local[2]").appName("killed driver")
         .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").getOrCreate())
gs._before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
gs.run(spark, "geo.c", curve="hilbert", options={"min-input-files": 2}, warehouse=sys.argv[1], config=sys.argv[2])
"""


def case_killed_driver(spark) -> None:
    generate("geo.c", 20_000)
    before = snapshots("geo.c")
    p = subprocess.run([sys.executable, "-c", DRIVER, WH, CFG], capture_output=True, text=True, timeout=180)
    assert p.returncode == -signal.SIGKILL, f"the driver exited {p.returncode}: {p.stderr[-2000:]}"
    markers = files_under("geo.c", "geocompact-job-")
    assert len(markers) == 1, f"want the killed job's marker: {markers}"
    dead = os.path.basename(markers[0]).removeprefix("geocompact-job-").split(".")[0]
    assert files_under("geo.c", tag(dead)), "the killed job wrote nothing"
    assert snapshots("geo.c") == before
    r = run(spark, "geo.c")
    assert r.result.verified and snapshots("geo.c") == before + 1
    assert not files_under("geo.c", tag(dead)) and not files_under("geo.c", "geocompact-job-"), \
        "the rerun did not sweep the killed job"
    print(f"(c) driver killed before its commit: the rerun committed and swept job {dead}")


def case_conflict(spark) -> None:
    generate("geo.d", 20_000)
    pre = set(files_under("geo.d", ".parquet"))
    state: dict[str, object] = {}

    def writer() -> None:
        state["job_files"] = set(files_under("geo.d", ".parquet")) - pre
        gc("rewrite", "--table", "geo.d", "--option", "rewrite-all")
        state["snapshots"], state["live"] = snapshots("geo.d"), sorted(live("geo.d"))

    gs._before_commit = writer
    try:
        run(spark, "geo.d")
    except geocompact.CommitConflict as e:
        assert e.exit_code == 4, e
    else:
        raise AssertionError("no CommitConflict")
    finally:
        gs._before_commit = None
    assert state["job_files"], "the units wrote nothing"
    assert snapshots("geo.d") == state["snapshots"] and sorted(live("geo.d")) == state["live"], "committed"
    assert not files_under("geo.d", "geocompact-job-"), "the job's marker stayed"
    left = [p for p in state["job_files"] if os.path.exists(p)]
    assert not left, f"the job's files stayed: {left}"
    print("(d) a conflicting writer: CommitConflict (exit 4), nothing committed, the job's files deleted")


def case_dataframe(spark) -> None:
    """api='dataframe': the units through a DataFrame's mapInPandas (the
    binary found on the workers, as an installed wheel provides it): one
    snapshot, the local rewrite's output; ship_binary with it is refused."""
    generate("geo.f", 60_000, seed=5)
    generate("geo.f_twin", 60_000, seed=5)
    gc("rewrite", "--table", "geo.f_twin", "--curve", "hilbert", "--option", "min-input-files=2")
    before = snapshots("geo.f")
    try:
        gs.run(spark, "geo.f", api="dataframe", ship_binary=True, warehouse=WH, config=CFG)
    except ValueError as e:
        assert "ship_binary" in str(e), e
    else:
        raise AssertionError("api='dataframe' took ship_binary")
    r = gs.run(spark, "geo.f", curve="hilbert", options=OPTS, warehouse=WH, config=CFG, api="dataframe")
    assert r.result.verified and r.result.snapshots_committed == 1, r.result
    assert len({u["group"] for u in r.units}) == 2, r.units
    assert snapshots("geo.f") == before + 1
    assert content("geo.f") == content("geo.f_twin"), "output differs from geocompact rewrite on the twin table"
    print("(f) api='dataframe' (mapInPandas): one snapshot, output equal to the local rewrite's")


def case_spark_submit(spark) -> None:
    """spark-submit of geocompact/spark.py with the CLI's flags and exit
    codes (its own driver, local[1])."""
    del spark
    generate("geo.e", 20_000)
    submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    head = [submit, "--master", "local[1]", "--conf", "spark.ui.enabled=false", geocompact.spark_submit.__file__]
    where = ["--warehouse", WH, "--config", CFG]
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

    os.environ["GEOCOMPACT_WAREHOUSE"] = WH
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("geocompact spark test")
             .config("spark.task.maxFailures", "4")
             .config("spark.executorEnv.PYTHONPATH", os.environ.get("PYTHONPATH", ""))
             .config("spark.executorEnv.GEOCOMPACT_BINARY", BIN)
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
        for case in (case_overlap, case_killed_worker, case_killed_driver, case_conflict, case_dataframe,
                     case_spark_submit):
            t0 = time.time()
            case(spark)
            print(f"    {case.__name__}: {time.time() - t0:.1f}s", flush=True)
    finally:
        spark.stop()
    print("spark: all cases passed")


if __name__ == "__main__":
    main()
