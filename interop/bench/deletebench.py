"""Delete maintenance side by side: geocompact rewrite-deletes against Spark's
rewrite_position_delete_files on one table Spark wrote and deleted from (run
it through interop/bench/deletes.sh).

The table: clustered points (geocompact generate) written by Spark into a
v2 merge-on-read Iceberg table partitioned by day(ts), with
write.delete.granularity=partition, in id order over a fixed number of
write tasks (so in as many data files, give or take a day boundary); then
Spark runs DELETE commits, each deleting a small scattered set of rows
(id % M = k), so every commit adds one position delete file per day. Spark
then writes the surviving rows, the same way, into a second table with no
deletes: the baseline.

Maintenance runs, each on a fresh copy of that table (the warehouse is
copied back byte for byte at the same path before every run, as
peerbench does), one process at a time, in rounds whose order alternates:
  geocompact rewrite-deletes --option rewrite-all=true
  Spark CALL system.rewrite_position_delete_files(options => map('rewrite-all','true'))
  geocompact rewrite --strategy binpack --option rewrite-all=true (a data
      rewrite that applies the deletes; target: the baseline's mean file size)
Per run: the process's wall time, its call time (Spark: timed in the
driver; geocompact: the whole process, which is its call), and the peak
RSS of its process tree (the Python driver and Spark's JVM together, as
peerbench measures Spark).

Scans: every state side by side in one warehouse (the first round's
outputs merged into the working path; every file name is unique), each
read through its own metadata file: by Spark
(spark.read.format("iceberg").load(<metadata.json>), aggregate push-down
off so that count(*) scans) and by DuckDB (iceberg_scan(<metadata.json>)).
Per state: a full count(*) and count(*) over bbox windows of a fraction
(1%) of the data's extent, centred on random rows; one unmeasured pass
first, then alternating rounds, medians. Every count must agree across
states and engines (and with Spark's count after the DELETEs), or the
bench fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from peerbench import last_json, load, local_path, measured  # noqa: E402

TABLE = "bench.points"
BASELINE = "bench.baseline"
COLUMNS = ("id bigint, ts timestamp, device_id int, geometry binary, "
           "bbox_minx double, bbox_miny double, bbox_maxx double, bbox_maxy double")
STATES = ["before", "after geocompact rewrite-deletes", "after Spark rewrite_position_delete_files",
          "after data rewrite (geocompact)", "no deletes (baseline)"]


def log(msg: str) -> None:
    print(f"deletebench: {msg}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- Spark drivers
# Each runs as its own process: `deletebench.py spark-build ...` etc.


def spark_build(a) -> dict:
    """Creates the table from the generated files, runs the DELETEs, and
    writes the baseline of the surviving rows."""
    from peers import CATALOG, iceberg_session

    files = json.loads(Path(a.sources).read_text())
    spark = iceberg_session(a.warehouse)
    # A merge-on-read DELETE shuffles its positions by partition: a few
    # shuffle partitions, not Spark's 200, on 2 cores.
    spark.conf.set("spark.sql.shuffle.partitions", "4")
    props = ("'format-version'='2', 'write.delete.mode'='merge-on-read', "
             "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read', "
             "'write.delete.granularity'='partition', 'write.distribution-mode'='none', "
             "'geocompact.geometry.column'='geometry'")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.bench")
    out = {}
    for t in (TABLE, BASELINE):
        spark.sql(f"CREATE TABLE {CATALOG}.{t} ({COLUMNS}) USING iceberg PARTITIONED BY (days(ts)) "
                  f"TBLPROPERTIES ({props})")
    fq = f"{CATALOG}.{TABLE}"

    def write(df, table):
        # In id order (arrival order: ts grows with id), so each task's rows
        # are clustered by day and no shuffle by partition is needed.
        df.repartitionByRange(a.tasks, "id").sortWithinPartitions("id").writeTo(f"{CATALOG}.{table}").append()

    start = time.monotonic()
    write(spark.read.parquet(*files).select("id", "ts", "device_id", "geometry", "bbox_minx", "bbox_miny",
                                             "bbox_maxx", "bbox_maxy"), TABLE)
    out["write_seconds"] = time.monotonic() - start
    out["rows"] = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]

    start = time.monotonic()
    times = []
    deadline = start + a.delete_budget
    for k in range(a.deletes):
        if time.monotonic() > deadline:
            log(f"spark-build: the DELETE budget of {a.delete_budget} s is spent after {k} DELETEs")
            break
        t = time.monotonic()
        spark.sql(f"DELETE FROM {fq} WHERE id % {a.modulus} = {k}")
        times.append(time.monotonic() - t)
        if (k + 1) % 20 == 0:
            log(f"spark-build: {k + 1} DELETEs, the last {times[-1]:.1f} s")
    out["deletes"] = len(times)
    out["delete_seconds"] = time.monotonic() - start
    out["delete_seconds_first_last"] = [times[0], times[-1]] if times else []
    out["live_rows"] = spark.sql(f"SELECT count(*) FROM {fq}").collect()[0][0]
    out["deleted_rows"] = out["rows"] - out["live_rows"]

    start = time.monotonic()
    write(spark.table(fq), BASELINE)
    out["baseline_seconds"] = time.monotonic() - start
    out["baseline_rows"] = spark.sql(f"SELECT count(*) FROM {CATALOG}.{BASELINE}").collect()[0][0]
    spark.stop()
    return out


def spark_procedure(a) -> dict:
    from peers import CATALOG, iceberg_session

    spark = iceberg_session(a.warehouse)
    start = time.monotonic()
    row = spark.sql(f"CALL {CATALOG}.system.rewrite_position_delete_files(table => '{TABLE}', "
                    "options => map('rewrite-all', 'true'))").collect()[0].asDict()
    call_seconds = time.monotonic() - start
    spark.stop()
    return {"call_seconds": call_seconds, "result": row}


def scan_spark(a) -> dict:
    """Every state's count(*) and window counts, timed in one session."""
    from peers import bbox_filter, iceberg_session

    states = json.loads(Path(a.states).read_text())
    windows = json.loads(Path(a.windows).read_text())
    spark = iceberg_session(a.warehouse)
    # A count(*) of a table without delete files is otherwise answered
    # from the manifests: every state is scanned alike.
    spark.conf.set("spark.sql.iceberg.aggregate-push-down.enabled", "false")

    def run(meta: str, where: str | None) -> tuple[float, int]:
        start = time.monotonic()
        df = spark.read.format("iceberg").load(meta)
        if where:
            df = df.where(where)
        n = df.count()
        return time.monotonic() - start, int(n)

    return rounds_of(states, windows, a.rounds, lambda meta, w: run(meta, bbox_filter(w) if w else None))


def duckdb_connection():
    import importlib

    import duckdb

    con = duckdb.connect()
    con.execute("SET autoinstall_known_extensions=false")
    con.execute("SET autoload_known_extensions=false")
    for ext in ("avro", "iceberg"):
        pkg = importlib.import_module(f"duckdb_extension_{ext}")
        path = Path(pkg.__file__).parent / "extensions" / f"v{duckdb.__version__}" / f"{ext}.duckdb_extension"
        con.execute(f"LOAD '{path}'")
    # Every query reads the files, not bytes an earlier query cached.
    con.execute("SET enable_external_file_cache=false")
    return con


def scan_duckdb(a) -> dict:
    from peers import bbox_filter

    states = json.loads(Path(a.states).read_text())
    windows = json.loads(Path(a.windows).read_text())
    con = duckdb_connection()

    def run(meta: str, w) -> tuple[float, int]:
        sql = f"SELECT count(*) FROM iceberg_scan('{meta}')" + (f" WHERE {bbox_filter(w)}" if w else "")
        start = time.monotonic()
        n = con.execute(sql).fetchone()[0]
        return time.monotonic() - start, int(n)

    return rounds_of(states, windows, a.rounds, run)


def rounds_of(states: dict[str, str], windows: list[dict], rounds: int, run) -> dict:
    """One unmeasured pass over every state, then `rounds` measured ones,
    the order of the states reversed every other round. Returns per state
    the count(*) times and counts, and per window the times and counts."""
    names = list(states)
    out = {n: {"count_seconds": [], "count": [], "window_seconds": [], "window_counts": []} for n in names}
    for r in range(-1, rounds):
        order = names if r % 2 == 0 else list(reversed(names))
        for n in order:
            t, c = run(states[n], None)
            wt, wc = zip(*(run(states[n], w) for w in windows)) if windows else ((), ())
            if r < 0:
                continue
            out[n]["count_seconds"].append(t)
            out[n]["count"].append(c)
            out[n]["window_seconds"].extend(wt)
            if r == 0:
                out[n]["window_counts"] = list(wc)
            elif list(wc) != out[n]["window_counts"]:
                raise RuntimeError(f"{n}: window counts differ between rounds")
    return out


# ---------------------------------------------------------------- the bench


class Bench:
    def __init__(self, a):
        self.a = a
        self.gc = a.geocompact
        self.py = os.environ["GEOCOMPACT_INTEROP_PYTHON"]
        self.work = Path(a.work).resolve()
        self.base = self.work / "base"
        self.twin = self.work / "twin"
        self.wh = self.twin / "wh"
        self.out = self.work / "outputs"

    def geocompact(self, *args: str, warehouse: Path | None = None) -> object:
        argv = [self.gc, "--warehouse", str(warehouse or self.wh), "--json", "-q", *args]
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"geocompact {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
        return json.loads(p.stdout)

    def driver(self, mode: str, *args: str) -> dict:
        """A Spark driver of this file, measured from outside."""
        m = measured([self.py, str(Path(__file__).resolve()), mode, *args])
        res = last_json(m.pop("stdout"))
        return {**m, **res}

    def metadata(self, table: str, warehouse: Path | None = None) -> str:
        db = (warehouse or self.wh) / "catalog.db"
        ns, name = table.split(".")
        with sqlite3.connect(db, timeout=30) as c:
            row = c.execute("SELECT metadata_location FROM iceberg_tables WHERE table_namespace=? AND table_name=?",
                            (ns, name)).fetchone()
        return local_path(row[0])

    def files(self, table: str) -> dict:
        fs = self.geocompact("inspect", "files", "--table", table)
        data = [f for f in fs if f["content"] == 0]
        dels = [f for f in fs if f["content"] == 1]
        eq = [f for f in fs if f["content"] == 2]
        return {"data_files": len(data), "data_rows": sum(f["record_count"] for f in data),
                "data_bytes": sum(f["file_size_in_bytes"] for f in data),
                "position_delete_files": len(dels), "position_deletes": sum(f["record_count"] for f in dels),
                "delete_bytes": sum(f["file_size_in_bytes"] for f in dels), "equality_delete_files": len(eq)}

    def build(self, results: dict) -> None:
        a = self.a
        shutil.rmtree(self.work, ignore_errors=True)
        gen = self.work / "generated"
        gen.mkdir(parents=True)
        log(f"generating {a.rows:,} clustered points in {a.files} files")
        self.geocompact("generate", "--table", "gen.points", "--rows", str(a.rows), "--commits", str(a.files),
                        "--distribution", "clustered", "--seed", str(a.seed), warehouse=gen)
        files = self.geocompact("inspect", "files", "--table", "gen.points", warehouse=gen)
        paths = [local_path(f["file_path"]) for f in files if f["content"] == 0]
        sources = self.work / "sources.json"
        sources.write_text(json.dumps(paths))
        self.wh.mkdir(parents=True)
        self.geocompact("tables")  # creates the catalog Spark's JDBC catalog opens
        log(f"Spark writes the table in {a.tasks} tasks and runs {a.deletes} DELETEs (id % {a.modulus} = k)")
        b = self.driver("spark-build", "--warehouse", str(self.wh), "--sources", str(sources),
                        "--tasks", str(a.tasks), "--deletes", str(a.deletes), "--modulus", str(a.modulus),
                        "--delete-budget", str(a.delete_budget))
        b.pop("peak_rss_bytes", None)
        results["build"] = b
        log(f"built in {b['wall_seconds']:.0f} s: write {b['write_seconds']:.0f} s, {b['deletes']} DELETEs "
            f"{b['delete_seconds']:.0f} s (first {b['delete_seconds_first_last'][0]:.1f} s, last "
            f"{b['delete_seconds_first_last'][-1]:.1f} s), baseline {b['baseline_seconds']:.0f} s")
        if b["rows"] != a.rows or b["baseline_rows"] != b["live_rows"]:
            raise RuntimeError(f"the build's counts disagree: {b}")
        results["tables"] = {"before": self.files(TABLE), "no deletes (baseline)": self.files(BASELINE)}
        results["metadata"] = {"before": self.metadata(TABLE), "no deletes (baseline)": self.metadata(BASELINE)}
        self.live = b["live_rows"]
        self.windows = self.draw_windows(paths)
        shutil.move(self.twin, self.base)
        self.out.mkdir(parents=True)
        shutil.rmtree(gen)

    def draw_windows(self, paths: list[str]) -> Path:
        import numpy as np
        import pyarrow.parquet as pq

        cols = [pq.read_table(p, columns=["bbox_minx", "bbox_miny"]) for p in paths]
        xs = np.concatenate([t.column(0).to_numpy() for t in cols])
        ys = np.concatenate([t.column(1).to_numpy() for t in cols])
        minx, maxx, miny, maxy = xs.min(), xs.max(), ys.min(), ys.max()
        rnd = random.Random(self.a.seed)
        hw = (self.a.window_area ** 0.5) * (maxx - minx) / 2
        hh = (self.a.window_area ** 0.5) * (maxy - miny) / 2
        ws = []
        for _ in range(self.a.window_count):
            i = rnd.randrange(len(xs))
            x, y = float(xs[i]), float(ys[i])
            ws.append({"minx": x - hw, "miny": y - hh, "maxx": x + hw, "maxy": y + hh})
        f = self.work / "windows.json"
        f.write_text(json.dumps(ws))
        return f

    def restore(self) -> None:
        shutil.rmtree(self.twin, ignore_errors=True)
        subprocess.run(["cp", "-a", str(self.base), str(self.twin)], check=True)

    def runs(self) -> list[str]:
        return ["geocompact rewrite-deletes", "Spark rewrite_position_delete_files", "geocompact data rewrite"]

    def run_one(self, name: str) -> dict:
        if name == "geocompact rewrite-deletes":
            m = measured([self.gc, "--warehouse", str(self.wh), "--json", "-q", "rewrite-deletes",
                          "--table", TABLE, "--option", "rewrite-all=true"])
            res = json.loads(m.pop("stdout"))
            m["call_seconds"] = m["wall_seconds"]
            m["result"] = res
            want = self.base_files["position_deletes"]
            if res["deletes_kept"] + res["dangling_deletes_dropped"] != want:
                raise RuntimeError(f"{name}: kept {res['deletes_kept']} and dropped "
                                   f"{res['dangling_deletes_dropped']} positions of {want}")
        elif name == "Spark rewrite_position_delete_files":
            m = self.driver("spark-procedure", "--warehouse", str(self.wh))
        else:
            target = max(self.baseline_mean_file, 1 << 20)
            m = measured([self.gc, "--warehouse", str(self.wh), "--json", "-q", "rewrite", "--table", TABLE,
                          "--strategy", "binpack", "--allow-layout-change", "--option", "rewrite-all=true",
                          "--option", f"target-file-size-bytes={target}"])
            res = json.loads(m.pop("stdout"))
            m["call_seconds"] = res["duration_ns"] / 1e9
            m["result"] = {k: res.get(k) for k in ("rewritten_data_files_count", "added_data_files_count",
                                                    "removed_delete_files_count", "verified")}
        m["tables"] = self.files(TABLE)
        if m["tables"]["data_rows"] - m["tables"]["position_deletes"] > self.live:
            raise RuntimeError(f"{name}: fewer positions than deleted rows: {m['tables']}")
        return m

    def keep(self, name: str) -> None:
        kept = self.out / slug(name)
        subprocess.run(["cp", "-a", str(self.wh), str(kept)], check=True)

    def merged(self, names: list[str]) -> None:
        """Every kept output's files in the working path, where their
        metadata points (file names are unique across outputs)."""
        self.restore()
        for name in names:
            subprocess.run(["cp", "-a", "-n", f"{self.out / slug(name)}/.", str(self.wh)], check=True)


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name)


def med(v: list[float]) -> float:
    return statistics.median(v) if v else float("nan")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in ("spark-build", "spark-procedure", "scan-spark", "scan-duckdb"):
        ap = argparse.ArgumentParser()
        ap.add_argument("mode")
        ap.add_argument("--warehouse")
        ap.add_argument("--sources")
        ap.add_argument("--tasks", type=int)
        ap.add_argument("--deletes", type=int)
        ap.add_argument("--modulus", type=int)
        ap.add_argument("--delete-budget", type=float)
        ap.add_argument("--states")
        ap.add_argument("--windows")
        ap.add_argument("--rounds", type=int)
        a = ap.parse_args()
        fn = {"spark-build": spark_build, "spark-procedure": spark_procedure,
              "scan-spark": scan_spark, "scan-duckdb": scan_duckdb}[a.mode]
        print(json.dumps(fn(a), default=str))
        return

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--geocompact", required=True)
    ap.add_argument("--work", default="/tmp/geocompact-deletebench")
    ap.add_argument("--smoke", action="store_true",
                    help="150,000 rows, 10 DELETEs, one round, 3 windows")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--files", type=int, help="files geocompact generate writes (Spark's input)")
    ap.add_argument("--tasks", type=int, help="Spark's write tasks: about the table's data files")
    ap.add_argument("--deletes", type=int, help="Spark DELETE commits")
    ap.add_argument("--modulus", type=int, help="each DELETE removes the rows with id %% MODULUS = k")
    ap.add_argument("--delete-budget", type=float, default=480,
                    help="seconds the DELETEs may take; the build stops DELETEing when they are spent")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--window-count", type=int)
    ap.add_argument("--window-area", type=float, default=0.01)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--results", help="write the results as JSON here (default WORK/results.json)")
    ap.add_argument("--report", metavar="RESULTS", help="print the tables of a results file and exit")
    a = ap.parse_args()
    if a.report:
        print(report(json.loads(Path(a.report).read_text())))
        return
    size = {"rows": 1_500_000, "files": 300, "tasks": 30, "deletes": 200, "modulus": 7919, "rounds": 3,
            "window_count": 5}
    if a.smoke:
        size.update(rows=150_000, files=30, tasks=6, deletes=10, modulus=797, rounds=1, window_count=3)
    for k, v in size.items():
        if getattr(a, k) is None:
            setattr(a, k, v)

    b = Bench(a)
    path = Path(a.results or b.work / "results.json")
    results = {"rows": a.rows, "tasks": a.tasks, "deletes_asked": a.deletes, "modulus": a.modulus,
               "rounds": a.rounds, "window_count": a.window_count, "window_area": a.window_area,
               "load_start": load(), "loads": [], "runs": {n: [] for n in b.runs()}, "failures": []}
    b.build(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, default=str))
    b.base_files = results["tables"]["before"]
    base_tbl = results["tables"]["no deletes (baseline)"]
    b.baseline_mean_file = base_tbl["data_bytes"] // max(base_tbl["data_files"], 1)
    state_of = dict(zip(b.runs(), STATES[1:4]))

    for r in range(a.rounds):
        order = b.runs() if r % 2 == 0 else list(reversed(b.runs()))
        results["loads"].append(load())
        for name in order:
            b.restore()
            try:
                m = b.run_one(name)
            except RuntimeError as e:
                log(f"round {r + 1}: {name} FAILED: {e}")
                results["failures"].append(f"round {r + 1}: {name}: {e}")
                path.write_text(json.dumps(results, indent=1, default=str))
                continue
            m["load"] = load()
            log(f"round {r + 1}: {name}: call {m['call_seconds']:.2f} s, process {m['wall_seconds']:.2f} s, "
                f"peak RSS {m['peak_rss_bytes'] / 2**20:.0f} MiB, load {m['load']}")
            results["runs"][name].append(m)
            if r == 0:
                b.keep(name)
                results["tables"][state_of[name]] = m["tables"]
                results["metadata"][state_of[name]] = b.metadata(TABLE)
            path.write_text(json.dumps(results, indent=1, default=str))

    states = {s: results["metadata"][s] for s in STATES if s in results["metadata"]}
    b.merged([n for n in b.runs() if state_of[n] in states])
    spec = b.work / "states.json"
    spec.write_text(json.dumps(states))
    results["scans"] = {}
    for engine, mode in (("spark", "scan-spark"), ("duckdb", "scan-duckdb")):
        log(f"{engine} scans every state: {a.rounds} round(s) of count(*) and {a.window_count} windows")
        try:
            m = b.driver(mode, "--warehouse", str(b.wh), "--states", str(spec), "--windows", str(b.windows),
                         "--rounds", str(a.rounds))
        except RuntimeError as e:
            log(f"{engine} scans FAILED: {e}")
            results["failures"].append(f"{engine} scans: {e}")
            continue
        results["scans"][engine] = {k: v for k, v in m.items() if k in states}
        path.write_text(json.dumps(results, indent=1, default=str))
    results["load_end"] = load()
    results["failures"] += check_counts(results, b.live)
    results["summary"] = summarize(results)
    path.write_text(json.dumps(results, indent=1, default=str))
    print(report(results))
    if results["failures"]:
        for f in results["failures"]:
            log(f"FAILED: {f}")
        sys.exit(1)
    log(f"every state's count(*) and window counts agree across states and engines; {path}")


def check_counts(res: dict, live: int) -> list[str]:
    out = []
    windows = None
    for engine, per in res.get("scans", {}).items():
        for state, s in per.items():
            if set(s["count"]) != {live}:
                out.append(f"{engine}, {state}: count(*) {sorted(set(s['count']))}, want {live}")
            if windows is None:
                windows = (engine, state, s["window_counts"])
            elif s["window_counts"] != windows[2]:
                out.append(f"{engine}, {state}: window counts {s['window_counts']}, "
                           f"{windows[0]} {windows[1]} counts {windows[2]}")
    for state, t in res.get("tables", {}).items():
        if state != "before" and "baseline" not in state and t["data_rows"] - t["position_deletes"] > live:
            out.append(f"{state}: {t['data_rows']} rows in data files, {t['position_deletes']} positions: "
                       f"fewer than the {res['build']['deleted_rows']} deleted rows")
    return out


def summarize(res: dict) -> dict:
    med_runs = {name: {k: med([m[k] for m in ms]) for k in ("call_seconds", "wall_seconds", "peak_rss_bytes")}
                for name, ms in res["runs"].items() if ms}
    scans = {engine: {state: {"count_seconds": med(s["count_seconds"]), "window_seconds": med(s["window_seconds"]),
                              "count": s["count"][0] if s["count"] else None,
                              "window_rows": sum(s["window_counts"]) / max(len(s["window_counts"]), 1)}
                      for state, s in per.items()}
             for engine, per in res.get("scans", {}).items()}
    goals = {}
    ours, theirs = med_runs.get("geocompact rewrite-deletes"), med_runs.get("Spark rewrite_position_delete_files")
    if ours and theirs:
        goals["speed vs Spark's call (goal >= 3x)"] = theirs["call_seconds"] / ours["wall_seconds"]
        goals["speed vs Spark's process (goal >= 3x)"] = theirs["wall_seconds"] / ours["wall_seconds"]
        goals["memory, ours / Spark's (goal <= 0.25)"] = ours["peak_rss_bytes"] / theirs["peak_rss_bytes"]
    beside = {}
    for engine, per in scans.items():
        o, base, spark = per.get(STATES[1]), per.get(STATES[4]), per.get(STATES[2])
        if o and base:
            goals[f"{engine} count(*) after ours / baseline (goal <= 1.2)"] = o["count_seconds"] / base["count_seconds"]
            goals[f"{engine} window after ours / baseline (goal <= 1.2)"] = o["window_seconds"] / base["window_seconds"]
        if o and spark:
            beside[f"{engine} count(*) after ours / after Spark's procedure"] = o["count_seconds"] / spark["count_seconds"]
            beside[f"{engine} window after ours / after Spark's procedure"] = o["window_seconds"] / spark["window_seconds"]
    return {"runs": med_runs, "scans": scans, "goals": goals, "beside": beside}


def report(res: dict) -> str:
    b = res["build"]
    s = summarize(res)
    lines = [f"{b['rows']:,} points written by Spark in {res['tasks']} tasks, v2 merge-on-read, day(ts), "
             f"write.delete.granularity=partition; {b['deletes']} DELETE commits (of {res['deletes_asked']} asked; "
             f"id % {res['modulus']} = k) deleted {b['deleted_rows']:,} rows, {b['live_rows']:,} left. "
             f"Build: write {b['write_seconds']:.0f} s, DELETEs {b['delete_seconds']:.0f} s (first "
             f"{b['delete_seconds_first_last'][0]:.1f} s, last {b['delete_seconds_first_last'][-1]:.1f} s), "
             f"baseline {b['baseline_seconds']:.0f} s. {len(res['loads'])} of {res['rounds']} round(s), medians; "
             f"load {res['load_start']} .. {res.get('load_end', 'unfinished')}", "",
             "| state | data files | position delete files | positions | delete MiB |", "|---|---|---|---|---|"]
    for state in STATES:
        t = res["tables"].get(state)
        if t:
            lines.append(f"| {state} | {t['data_files']} | {t['position_delete_files']} | {t['position_deletes']:,} | "
                         f"{t['delete_bytes'] / 2**20:.2f} |")
    lines += ["", "| maintenance run | call s | process s | peak RSS MiB | rewritten / added files |",
              "|---|---|---|---|---|"]
    for name, m in s["runs"].items():
        r = res["runs"][name][0].get("result", {})
        files = (f"{r.get('rewritten_delete_files_count')} / {r.get('added_delete_files_count')} delete"
                 if "rewritten_delete_files_count" in r else
                 f"{r.get('rewritten_data_files_count')} / {r.get('added_data_files_count')} data, "
                 f"{r.get('removed_delete_files_count')} delete removed")
        lines.append(f"| {name} | {m['call_seconds']:.2f} | {m['wall_seconds']:.2f} | "
                     f"{m['peak_rss_bytes'] / 2**20:,.0f} | {files} |")
    engines = list(s["scans"])
    if engines:
        lines += ["", f"Scans, medians in seconds: count(*) / one {res['window_area'] * 100:g}% bbox window "
                      f"({res['window_count']} windows; rows counted agree everywhere)", "",
                  "| state | " + " | ".join(f"{e} count(*) | {e} window" for e in engines) + " |",
                  "|---|" + "---|---|" * len(engines)]
        for state in STATES:
            cells = []
            for e in engines:
                x = s["scans"][e].get(state)
                cells += [f"{x['count_seconds']:.3f}", f"{x['window_seconds']:.3f}"] if x else ["", ""]
            lines.append(f"| {state} | " + " | ".join(cells) + " |")
    if s["goals"]:
        lines += ["", "| goal | measured |", "|---|---|"]
        for g, v in s["goals"].items():
            ok = v >= 3 if ">=" in g else v <= float(g.rsplit("<= ", 1)[1].rstrip(")"))
            lines.append(f"| {g} | {v:.2f} {'met' if ok else 'missed'} |")
        for g, v in s.get("beside", {}).items():
            lines.append(f"| {g} (no goal) | {v:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
