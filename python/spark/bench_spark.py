"""The rewrite on Spark against the local engine, side by side in one run:
run by python/spark/bench_spark.sh, figures in docs/scale-out.md.

Two twin tables (the same seed) of ROWS points in FILES arrival-order files,
partitioned by bucket(BUCKETS, id) so that the rewrite has BUCKETS groups:
`geocompact rewrite --curve hilbert` on one, geocompact.spark.rewrite on a
local-cluster[2,1,1024] (two executor JVMs, one core each) on the other.
Then two twin tables of the same points unpartitioned: one group over the
worker's budget, which the local engine sorts by spilling and Spark spreads
over its executors in stages (scatter, bucket, span). Prints the wall
times, the units' times, each worker's peak resident set against its
budget, and a scaling model from the measured unit times.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from datetime import datetime

import geocompact.spark as gs

BIN = os.environ["GEOCOMPACT_BINARY"]
MIB = 1 << 20
#: The worker's group budget (max-group-memory-bytes' default) and the
#: margin the target allows above it.
BUDGET, MARGIN = 128 * MIB, 300 * MIB


def gc(wh: str, cfg: str, *args: str) -> tuple[str, float, int]:
    """Runs geocompact; returns its stdout, wall seconds and peak RSS."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.monotonic()
        p = subprocess.Popen([BIN, "--warehouse", wh, "--config", cfg, *args], stdout=out, stderr=err)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        code = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        assert code == 0, f"geocompact {' '.join(args)}: exit {code}: {err.read()}"
        return out.read(), wall, ru.ru_maxrss << 10


def live(wh: str, cfg: str, table: str) -> list[str]:
    out, _, _ = gc(wh, cfg, "inspect", "files", "--table", table, "--json")
    return [f["file_path"].removeprefix("file://") for f in json.loads(out)]


def content(wh: str, cfg: str, table: str) -> Counter:
    return Counter(hashlib.md5(open(p, "rb").read()).hexdigest() for p in live(wh, cfg, table))


def when(s: str) -> float:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_500_000)
    ap.add_argument("--files", type=int, default=300)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--json", help="write the figures here as JSON")
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="geocompact-spark-bench-")
    wh, cfg = os.path.join(work, "warehouse"), os.path.join(work, "geocompact.yaml")
    with open(cfg, "w") as f:
        f.write("{}\n")
    try:
        for t in ("geo.local", "geo.spark"):
            gc(wh, cfg, "generate", "--table", t, "--rows", str(a.rows), "--commits", str(a.files),
               "--partition-by", f"bucket({a.buckets}, id)", "--seed", "11")
        # One unpartitioned group over the worker's budget (the default
        # 128 MiB): the local engine spills, Spark shuffles it in stages.
        for t in ("geo.local1", "geo.spark1"):
            gc(wh, cfg, "generate", "--table", t, "--rows", str(a.rows), "--commits", str(a.files), "--seed", "11")

        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("geocompact spark bench")
                 .config("spark.executorEnv.PYTHONPATH", os.environ.get("PYTHONPATH", ""))
                 .config("spark.executor.memory", "512m")
                 .config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false")
                 .getOrCreate())
        status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus
        deadline = time.time() + 120
        while status().size() < 3:
            assert time.time() < deadline, "the two executors did not register"
            time.sleep(0.2)
        try:
            fig = side_by_side(spark, wh, cfg, "geo.local", "geo.spark")
            # At an 8 MiB target the group is about ten files, as a group
            # over a worker's budget in a real table is many files.
            fig1 = side_by_side(spark, wh, cfg, "geo.local1", "geo.spark1", target=8 << 20)
        finally:
            spark.stop()
        fig.update(rows=a.rows, files=a.files)
        fig["shuffled"] = fig1
        # Scaling model: a 1 TB table of 100 partitions of 10 GB on N
        # workers. A unit's time scales with its bytes at the measured
        # rate; units run in waves of N; plan and commit are measured here
        # and grow with the file count, not the bytes (assumed constant).
        table_bytes = sum(os.path.getsize(p) for p in live(wh, cfg, "geo.spark"))
        rate = table_bytes / sum(fig.pop("_unit_secs"))  # bytes per second per worker core
        fig1.pop("_unit_secs")
        unit_10g = 10e9 / rate
        fig["bytes"] = table_bytes
        fig["bytes_per_worker_second_mib"] = round(rate / MIB, 1)
        fig["model_1tb_hours"] = {str(n): round((fig["plan_seconds"] + fig["commit_seconds"] + -(-100 // n) * unit_10g)
                                                / 3600, 2) for n in (1, 10, 25, 50, 100)}
        print(json.dumps(fig, indent=2))
        if a.json:
            with open(a.json, "w") as f:
                json.dump(fig, f, indent=2)
        assert fig["output_equal_to_local"], "the Spark output differs from the local engine's"
        assert fig1["output_equal_to_local"], "the shuffled Spark output differs from the local engine's"
        assert fig1["units"].get("scatter"), f"the one group was not shuffled: {fig1['units']}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def side_by_side(spark: object, wh: str, cfg: str, local_table: str, spark_table: str, target: int = 0) -> dict:
    """Rewrites local_table with the local engine and its twin spark_table
    on Spark (hilbert, defaults but for the target file size when given);
    returns the figures."""
    opts = {"target-file-size-bytes": target} if target else {}
    flags = [a for k, v in opts.items() for a in ("--option", f"{k}={v}")]
    out, local_wall, local_rss = gc(wh, cfg, "--json", "rewrite", "--table", local_table, "--curve", "hilbert", *flags)
    local = json.loads(out)
    t0 = time.time()
    r = gs.run(spark, spark_table, curve="hilbert", warehouse=wh, config=cfg, ship_binary=True, options=opts)
    t1 = time.time()
    spark_wall = t1 - t0
    assert r.result.verified and r.result.snapshots_committed == 1, r.result
    starts = [when(u["start"]) for u in r.units]
    ends = [when(u["end"]) for u in r.units]
    unit_secs = sorted(e - s for s, e in zip(starts, ends))
    peak = max(u.get("peak_rss_bytes") or 0 for u in r.units)
    kinds = Counter(u.get("kind") or "group" for u in r.units)
    # When each stage's units ran, in seconds from the driver's start.
    stages = {k: [round(min(when(u["start"]) for u in r.units if (u.get("kind") or "group") == k) - t0, 2),
                  round(max(when(u["end"]) for u in r.units if (u.get("kind") or "group") == k) - t0, 2)]
              for k in kinds}
    return {
        "stages": stages,
        "units": dict(kinds),
        "local_seconds": round(local_wall, 2), "local_peak_rss_mib": round(local_rss / MIB),
        "spark_seconds": round(spark_wall, 2), "ratio": round(spark_wall / local_wall, 2),
        # plan, Spark's scheduling and the workers' start; the commit.
        "plan_seconds": round(min(starts) - t0, 2), "commit_seconds": round(t1 - max(ends), 2),
        "unit_seconds": [round(s, 2) for s in unit_secs] if len(unit_secs) <= 8 else
        {"n": len(unit_secs), "median": round(unit_secs[len(unit_secs) // 2], 2), "max": round(unit_secs[-1], 2)},
        "_unit_secs": unit_secs,
        "worker_peak_rss_mib": round(peak / MIB), "worker_rss_limit_mib": (BUDGET + MARGIN) // MIB,
        "output_equal_to_local": content(wh, cfg, local_table) == content(wh, cfg, spark_table),
        "local_added_files": local["added_data_files_count"],
        "spark_added_files": r.result.added_data_files_count,
    }


if __name__ == "__main__":
    main()
