"""geocompact against the compactors its users would otherwise run, side by
side on twins of one generated table (run it through interop/bench/run.sh).

One clustered-point Iceberg table is generated (geocompact generate) and its
files are ingested, as they are, into a Delta table beside it. The pair is
kept as the base; before every run the working copy is removed and the base
copied back byte for byte, at the same path (Iceberg's metadata holds
absolute paths), so every peer starts from identical files. One engine
process runs at a time. Every round runs every peer; odd rounds run them in
reverse order, so no peer always runs first or last under the same load.

Per run: the wall time of the whole process, the compaction call alone
(timed inside the peer's driver; geocompact's own duration, which leaves out
loading the table), the peak RSS of the process tree (sampled from /proc:
the driver and every child, summed), the peer's own count of the output's
rows and data files. A row count that differs from the input's fails the run.

In the first round each output is kept (the layouts do not depend on the
round) and, before the next round, its files planned per bbox window
counted twice: by `geocompact bench --layouts current` and by Spark's
own scan planning with the same bbox filter (peers.py plan-iceberg,
plan-delta). The mean, median and p95 of the two must be equal, or the run
fails. Then DuckDB reads each output per window (peers.py read-duckdb): the
files whose footer statistics meet the window, which must be as many as
Spark planned, scanned with the same bbox filter; the row groups and bytes
it read are recorded through the file system it reads with.

--large is the second table: about 1 GiB of clustered points, partitioned
by day(ts), compacted to a 128 MiB target; its Delta twin (ingested only
when a Delta run is kept by --only) is not partitioned.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import unquote

HERE = Path(__file__).resolve().parent
PAGE = os.sysconf("SC_PAGE_SIZE")
TABLE = "bench.points"


def log(msg: str) -> None:
    print(f"peerbench: {msg}", file=sys.stderr, flush=True)


def load() -> str:
    """The 1, 5 and 15 minute load averages, as uptime prints them."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


# ---------------------------------------------------------------- processes


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss(root: int) -> int:
    """The summed resident memory of root and all its descendants."""
    kids = _children()
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE
        except (OSError, IndexError, ValueError):
            pass
    return total


def measured(argv: list[str], env: dict | None = None) -> dict:
    """Runs argv, sampling its process tree's RSS every 100 ms; returns the
    wall time, the peak tree RSS and the output."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], tree_rss(proc.pid))
            done.wait(0.1)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    out, err = proc.communicate()
    wall = time.monotonic() - start
    done.set()
    t.join()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {proc.returncode}:\n{err[-4000:]}")
    return {"wall_seconds": wall, "peak_rss_bytes": peak[0], "stdout": out}


def last_json(text: str):
    """The JSON document a command printed: all of its output (geocompact
    --json), or its last line (a Spark driver, after Spark's own lines)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return json.loads(text.strip().splitlines()[-1])


# ---------------------------------------------------------------- the bench


class Bench:
    def __init__(self, a):
        self.a = a
        self.gc = a.geocompact
        self.py = os.environ["GEOCOMPACT_INTEROP_PYTHON"]
        self.work = Path(a.work).resolve()
        self.base = self.work / "base"
        self.twin = self.work / "twin"
        self.out = self.work / "outputs"
        self.wh = self.twin / "wh"
        self.delta = self.twin / "delta"
        self.hilbert = bool(os.environ.get("GEOCOMPACT_INTEROP_ICEBERG112_JARS"))

    def geocompact(self, *args: str) -> object:
        p = subprocess.run([self.gc, "--json", "-q", *args], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"geocompact {' '.join(args)} exited {p.returncode}:\n{p.stderr}")
        return json.loads(p.stdout)

    def prepare(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)
        self.twin.mkdir(parents=True)
        a = self.a
        log(f"generating {a.rows} clustered points in {a.files} files")
        part = ["--partition-by", a.partition_by] if a.partition_by else []
        self.geocompact("--warehouse", str(self.wh), "generate", "--table", TABLE,
                        "--rows", str(a.rows), "--commits", str(a.files), *part,
                        "--distribution", "clustered", "--seed", str(a.seed))
        files = self.geocompact("--warehouse", str(self.wh), "inspect", "files", "--table", TABLE)
        paths = [local_path(f["file_path"]) for f in files if f["content"] == 0]
        self.input_rows = sum(f["record_count"] for f in files if f["content"] == 0)
        assert self.input_rows == a.rows, (self.input_rows, a.rows)
        if any(fmt == "delta" for _, fmt, _ in self.runs()):
            log(f"ingesting the {len(paths)} files into the Delta twin")
            self.geocompact("ingest", "--delta", str(self.delta), "--create", *paths)
        self.windows = self.draw_windows(paths)
        shutil.move(self.twin, self.base)
        (self.out / "iceberg").mkdir(parents=True)

    def draw_windows(self, paths: list[str]) -> dict[str, Path]:
        """Square windows of the given fractions of the data's extent,
        each centred on a random row (data placement, as bench draws)."""
        import numpy as np
        import pyarrow.parquet as pq

        cols = [pq.read_table(p, columns=["bbox_minx", "bbox_miny"]) for p in paths]
        xs = np.concatenate([t.column(0).to_numpy() for t in cols])
        ys = np.concatenate([t.column(1).to_numpy() for t in cols])
        del cols
        minx, maxx, miny, maxy = xs.min(), xs.max(), ys.min(), ys.max()
        rnd = random.Random(self.a.seed)
        out = {}
        for area in self.a.window_areas:
            hw = (area ** 0.5) * (maxx - minx) / 2
            hh = (area ** 0.5) * (maxy - miny) / 2
            ws = []
            for _ in range(self.a.window_count):
                i = rnd.randrange(len(xs))
                x, y = float(xs[i]), float(ys[i])
                ws.append({"minx": x - hw, "miny": y - hh, "maxx": x + hw, "maxy": y + hh})
            f = self.work / f"windows-{area:g}.json"
            f.write_text(json.dumps(ws))
            out[f"{area:g}"] = f
        return out

    def restore(self) -> None:
        shutil.rmtree(self.twin, ignore_errors=True)
        subprocess.run(["cp", "-a", str(self.base), str(self.twin)], check=True)

    # ------------------------------------------------------------ runs

    def runs(self) -> list[tuple[str, str, str]]:
        """(name, format, how) of every run."""
        r = [("spark binpack", "iceberg", "spark-iceberg binpack"),
             ("spark sort", "iceberg", "spark-iceberg sort"),
             ("spark zorder", "iceberg", "spark-iceberg zorder")]
        if self.hilbert:
            r.append(("spark hilbert", "iceberg", "spark-iceberg hilbert"))
        r += [("geocompact binpack", "iceberg", "geocompact binpack"),
              ("geocompact hilbert", "iceberg", "geocompact hilbert"),
              ("geocompact kd", "iceberg", "geocompact kd"),
              ("delta-rs compact", "delta", "delta-rs compact"),
              ("delta-rs z_order", "delta", "delta-rs zorder"),
              ("delta-spark zorder", "delta", "spark-delta zorder"),
              ("geocompact delta binpack", "delta", "geocompact binpack"),
              ("geocompact delta hilbert", "delta", "geocompact hilbert"),
              ("geocompact delta kd", "delta", "geocompact kd")]
        if self.a.only:
            # In --only's order: the runs that must finish first go first.
            # A part equal to a run's name keeps that run alone ("spark
            # zorder" is not also "delta-spark zorder"); any other part
            # keeps every run whose name contains it.
            parts = self.a.only.split(",")
            names = {x[0] for x in r}

            def kept(o: str, name: str) -> bool:
                return o == name if o in names else o in name

            r = sorted((x for x in r if any(kept(o, x[0]) for o in parts)),
                       key=lambda x: next(i for i, o in enumerate(parts) if kept(o, x[0])))
        return r

    def run_one(self, name: str, fmt: str, how: str) -> dict:
        peer, variant = how.split()
        target = str(self.a.target)
        if peer == "geocompact":
            flags = ["--strategy", "binpack"] if variant == "binpack" else ["--curve", variant]
            where = ["--warehouse", str(self.wh), "rewrite", "--table", TABLE] if fmt == "iceberg" \
                else ["rewrite", "--delta", str(self.delta)]
            argv = [self.gc, "--json", "-q", *where, *flags, "--allow-layout-change",
                    "--option", f"target-file-size-bytes={target}", "--option", "rewrite-all=true"]
        else:
            loc = str(self.wh) if fmt == "iceberg" else str(self.delta)
            argv = [self.py, str(HERE / "peers.py"), "compact", peer, variant,
                    "--location", loc, "--table", TABLE, "--target", target]
        m = measured(argv)
        res = last_json(m.pop("stdout"))
        if peer == "geocompact":
            m["call_seconds"] = res["duration_ns"] / 1e9
            files = self.geocompact(*(["--warehouse", str(self.wh), "inspect", "files", "--table", TABLE]
                                      if fmt == "iceberg" else ["inspect", "files", "--delta", str(self.delta)]))
            data = [f for f in files if f.get("content", 0) == 0]
            m["rows"] = sum(f["record_count"] for f in data)
            m["files"] = len(data)
        else:
            m.update(call_seconds=res["call_seconds"], rows=res["rows"], files=res["files"])
        if m["rows"] != self.input_rows:
            raise RuntimeError(f"{name}: the peer counts {m['rows']} rows, the input has {self.input_rows}")
        return m

    # ------------------------------------------------------------ counting

    def bench_counts(self, fmt: str, location: Path) -> dict:
        out = {}
        for area, wf in self.windows.items():
            src = ["--warehouse", str(self.wh), "bench", "--table", TABLE] if fmt == "iceberg" \
                else ["bench", "--delta", str(location)]
            rep = self.geocompact(*src, "--layouts", "current", "--windows", str(wf))
            cur = rep["layouts"][0]
            out[area] = {k: cur[k] for k in ("files", "mean_files_planned", "median_files_planned",
                                             "p95_files_planned", "mean_matching_rows")}
        return out

    def keep_iceberg(self, name: str) -> list[str]:
        """Keeps the working warehouse as NAME's output; returns the kept
        copy's data files."""
        kept = self.out / "iceberg" / slug(name)
        subprocess.run(["cp", "-a", str(self.wh), str(kept)], check=True)
        files = self.geocompact("--warehouse", str(self.wh), "inspect", "files", "--table", TABLE)
        return [str(kept / Path(local_path(f["file_path"])).relative_to(self.wh))
                for f in files if f["content"] == 0]

    def delta_files(self, location: Path) -> list[str]:
        files = self.geocompact("inspect", "files", "--delta", str(location))
        return [str(location / unquote(f["file_path"])) if ":" not in f["file_path"]
                else local_path(f["file_path"]) for f in files]

    def duckdb_reads(self, outputs: dict[str, list[str]]) -> dict:
        spec = self.work / "duckdb-outputs.json"
        spec.write_text(json.dumps(outputs))
        m = measured([self.py, str(HERE / "peers.py"), "read-duckdb", *self.windows_args(), str(spec)])
        return last_json(m["stdout"])

    def windows_args(self) -> list[str]:
        return [f"--windows={area}={f}" for area, f in self.windows.items()]

    def spark_iceberg_counts(self, names: list[str]) -> dict:
        """Spark's planning of every kept Iceberg output in one process:
        their files (all uniquely named) merged into the working path,
        where their metadata points, and a copy of each output's catalog
        renamed so each is its own Spark catalog."""
        import sqlite3

        shutil.rmtree(self.twin, ignore_errors=True)
        self.wh.mkdir(parents=True)
        cats = self.work / "catalogs"
        shutil.rmtree(cats, ignore_errors=True)
        cats.mkdir()
        pairs = {}
        for i, name in enumerate(names):
            kept = self.out / "iceberg" / slug(name)
            subprocess.run(["cp", "-a", "-n", f"{kept}/.", str(self.wh)], check=True)
            db = cats / f"o{i}.db"
            for suffix in ("", "-wal"):
                if (kept / f"catalog.db{suffix}").exists():
                    shutil.copy(kept / f"catalog.db{suffix}", f"{db}{suffix}")
            with sqlite3.connect(db) as c:
                c.execute("UPDATE iceberg_tables SET catalog_name = ?", (f"o{i}",))
                c.execute("UPDATE iceberg_namespace_properties SET catalog_name = ?", (f"o{i}",))
            pairs[f"o{i}"] = (name, db)
        m = measured([self.py, str(HERE / "peers.py"), "plan-iceberg", "--warehouse", str(self.wh),
                      "--table", TABLE, *self.windows_args(), *(f"{k}={db}" for k, (_, db) in pairs.items())])
        got = last_json(m["stdout"])
        return {pairs[k][0]: v for k, v in got.items()}

    def spark_delta_counts(self, locations: list[Path]) -> dict:
        m = measured([self.py, str(HERE / "peers.py"), "plan-delta", *self.windows_args(),
                      *map(str, locations)])
        return last_json(m["stdout"])


def local_path(uri: str) -> str:
    """A local file's path from its URI as a table records it: geocompact
    writes file:///p, Spark file:/p."""
    if uri.startswith("file:"):
        uri = "/" + unquote(uri.removeprefix("file:")).lstrip("/")
    return uri


def slug(name: str) -> str:
    return name.replace(" ", "-")


def summary(planned: list[int]) -> dict:
    v = sorted(float(x) for x in planned)
    k = min(max(int(-(-0.95 * len(v) // 1)) - 1, 0), len(v) - 1)
    return {"mean": sum(v) / len(v), "median": statistics.median(v), "p95": v[k]}


def agree(name: str, area: str, ours: dict, spark: dict) -> dict:
    s = summary(spark["planned"])
    mine = {"mean": ours["mean_files_planned"], "median": ours["median_files_planned"],
            "p95": ours["p95_files_planned"]}
    if ours["files"] != spark["files"] or any(abs(mine[k] - s[k]) > 1e-9 for k in s):
        raise RuntimeError(f"{name}, {area} windows: geocompact bench counts {ours['files']} files, "
                           f"{mine}; Spark's planning {spark['files']} files, {s}")
    return {"files": ours["files"], **s}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--geocompact")
    ap.add_argument("--work", default="/tmp/geocompact-peerbench")
    ap.add_argument("--smoke", action="store_true", help="150,000 rows in 30 files, one round, 20 windows")
    ap.add_argument("--large", action="store_true",
                    help="the ~1 GiB table: 20,000,000 rows in 300 commits, partitioned by day(ts), "
                         "128 MiB target")
    ap.add_argument("--rows", type=int)
    ap.add_argument("--files", type=int)
    ap.add_argument("--target", type=int)
    ap.add_argument("--partition-by", help="the generated table's partition spec, e.g. 'day(ts)'")
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--window-count", type=int, default=100)
    ap.add_argument("--window-areas", default="0.01,0.001")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--times-only", action="store_true",
                    help="time the runs and count their rows, but neither keep nor count their outputs' files per window "
                         "(more rounds of a table whose layouts an earlier run counted)")
    ap.add_argument("--only", help="comma-separated run names, or parts of names, to keep, run in that order (a whole name keeps that run alone)")
    ap.add_argument("--results", help="write the results as JSON here (default WORK/results.json)")
    ap.add_argument("--report", metavar="RESULTS", help="print the tables of a results file and exit")
    a = ap.parse_args()
    if a.report:
        results = json.loads(Path(a.report).read_text())
        summarize(results)
        print(report(results))
        return
    if a.smoke and a.large:
        ap.error("--smoke and --large are two sizes: give one")
    size = {"rows": 1_500_000, "files": 300, "target": 1 << 20, "rounds": 3}
    if a.smoke:
        size.update(rows=150_000, files=30, rounds=1)
        a.window_count, a.window_areas = 20, "0.01"
    if a.large:
        size.update(rows=20_000_000, target=128 << 20)
        a.partition_by = a.partition_by or "day(ts)"
    for k, v in size.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    a.window_areas = [float(x) for x in a.window_areas.split(",")]

    b = Bench(a)
    b.prepare()
    runs = b.runs()
    results = {"rows": a.rows, "files": a.files, "target": a.target, "rounds": a.rounds,
               "windows": a.window_count, "load_start": load(), "runs": {n: [] for n, _, _ in runs},
               "partition_by": a.partition_by, "planning": {}, "data_files": {}, "loads": [],
               "failures": []}
    path = Path(a.results or b.work / "results.json")
    delta_outputs = {}
    if (b.base / "delta").exists():
        delta_outputs["input"] = b.out / "delta-input"
        shutil.copytree(b.base / "delta", delta_outputs["input"])
    for r in range(a.rounds):
        order = runs if r % 2 == 0 else list(reversed(runs))
        results["loads"].append(load())
        for name, fmt, how in order:
            b.restore()
            try:
                m = b.run_one(name, fmt, how)
            except RuntimeError as e:
                # The other peers still run; the failure fails the bench.
                log(f"round {r + 1}: {name} FAILED: {e}")
                results["failures"].append(f"round {r + 1}: {name}: {e}")
                path.write_text(json.dumps(results, indent=1, default=str))
                continue
            m["load"] = load()
            log(f"round {r + 1}: {name}: call {m['call_seconds']:.1f} s, process {m['wall_seconds']:.1f} s, "
                f"peak RSS {m['peak_rss_bytes'] / 2**20:.0f} MiB, {m['files']} files, load {m['load']}")
            results["runs"][name].append(m)
            path.write_text(json.dumps(results, indent=1, default=str))
            if r == 0 and not a.times_only:
                try:
                    keep(b, results, name, fmt, delta_outputs)
                except RuntimeError as e:
                    # Its times stand; its windows are not counted.
                    log(f"{name}: counting its output FAILED: {e}")
                    results["failures"].append(f"{name}: counting its output: {e}")
                    results["planning"].pop(name, None)
                path.write_text(json.dumps(results, indent=1, default=str))
        if r == 0 and not a.times_only:
            count(b, results, delta_outputs)
            path.write_text(json.dumps(results, indent=1, default=str))
    results["load_end"] = load()

    failures = results["failures"] + summarize(results)
    path.write_text(json.dumps(results, indent=1, default=str))
    print(report(results))
    if failures:
        for f in failures:
            log(f"DISAGREE: {f}")
        sys.exit(1)
    if a.times_only:
        log(f"every output's row count equals the input's (outputs not counted: --times-only); {path}")
    else:
        log(f"every output's row count equals the input's; bench and Spark agree on every window set; {path}")


def summarize(results: dict) -> list[str]:
    """Fills in the files per window (where bench and Spark agree) and
    each run's medians; returns every disagreement."""
    failures = []
    table = {}
    for name, p in results["planning"].items():
        table[name] = {}
        for area in p["bench"]:
            try:
                table[name][area] = agree(name, area, p["bench"][area], p["spark"][area])
            except (RuntimeError, KeyError) as e:
                failures.append(str(e))
    results["files_per_window"] = table
    reads = {}
    for name, p in results["planning"].items():
        for area, d in p.get("duckdb", {}).items():
            try:
                reads.setdefault(name, {})[area] = duckdb_summary(name, area, d, p)
            except (RuntimeError, KeyError) as e:
                failures.append(str(e))
    results["duckdb_reads"] = reads
    results["medians"] = {
        name: {k: statistics.median(m[k] for m in ms)
               for k in ("call_seconds", "wall_seconds", "peak_rss_bytes", "files")}
        for name, ms in results["runs"].items() if ms}
    return failures


def duckdb_summary(name: str, area: str, d: dict, p: dict) -> dict:
    """DuckDB's medians per window; the files it read must be, window by
    window, the ones Spark planned, and its matching rows bench's."""
    spark = p["spark"][area]["planned"]
    if d["planned"] != spark:
        bad = next(i for i, (x, y) in enumerate(zip(d["planned"], spark)) if x != y) \
            if len(d["planned"]) == len(spark) else "count"
        raise RuntimeError(f"{name}, {area} windows: DuckDB's footer statistics meet other files "
                           f"than Spark planned (window {bad})")
    rows = sum(d["rows"]) / len(d["rows"])
    if abs(rows - p["bench"][area]["mean_matching_rows"]) > 1e-6:
        raise RuntimeError(f"{name}, {area} windows: DuckDB reads {rows} matching rows a window, "
                           f"bench counts {p['bench'][area]['mean_matching_rows']}")
    med = statistics.median
    return {"files": d["files"], "median_files": med(d["planned"]),
            "median_row_groups_planned": med(d["row_groups_planned"]),
            "median_row_groups_read": med(d["row_groups_read"]),
            "mean_row_groups_read": sum(d["row_groups_read"]) / len(d["row_groups_read"]),
            "median_bytes_read": med(d["bytes_read"]),
            "mean_bytes_read": sum(d["bytes_read"]) / len(d["bytes_read"]),
            "mean_rows": rows}


def keep(b: Bench, results: dict, name: str, fmt: str, delta_outputs: dict) -> None:
    """Counts NAME's output with geocompact's bench and keeps it for
    Spark's planning (round 1's outputs: the layouts do not depend on the
    round)."""
    if fmt == "iceberg":
        results["planning"][name] = {"bench": b.bench_counts("iceberg", b.wh)}
        results["data_files"][name] = b.keep_iceberg(name)
    else:
        dst = b.out / slug(name)
        shutil.copytree(b.delta, dst)
        delta_outputs[name] = dst


def count(b: Bench, results: dict, delta_outputs: dict) -> None:
    """Spark's planning of every kept output, one process per format, then
    DuckDB's reads of every output in one process."""
    b.restore()
    results["planning"]["iceberg input"] = {"bench": b.bench_counts("iceberg", b.wh)}
    results["data_files"]["iceberg input"] = b.keep_iceberg("iceberg input")
    iceberg = list(results["planning"])
    for name, got in b.spark_iceberg_counts(iceberg).items():
        results["planning"][name]["spark"] = got
    spark = b.spark_delta_counts(list(delta_outputs.values())) if delta_outputs else {}
    for name, loc in delta_outputs.items():
        key = "delta input" if name == "input" else name
        results["planning"][key] = {"bench": b.bench_counts("delta", loc), "spark": spark[str(loc)]}
        results["data_files"][key] = b.delta_files(loc)
    for name, got in b.duckdb_reads(results.pop("data_files")).items():
        results["planning"][name]["duckdb"] = got


def report(res: dict) -> str:
    lines = [f"{res['rows']:,} rows in {res['files']} files, target {res['target']:,} bytes, "
             f"{len(res['loads'])} of {res['rounds']} round(s), medians; load {res['load_start']} .. "
             f"{res.get('load_end', 'unfinished')}", "",
             "| run | call s | process s | peak RSS MiB | files |", "|---|---|---|---|---|"]
    for name, m in res["medians"].items():
        lines.append(f"| {name} | {m['call_seconds']:.1f} | {m['wall_seconds']:.1f} | "
                     f"{m['peak_rss_bytes'] / 2**20:,.0f} | {m['files']:.0f} |")
    areas = sorted({a for t in res["files_per_window"].values() for a in t}, key=float, reverse=True)
    lines += ["", "| output | files | " + " | ".join(f"{float(a) * 100:g}% mean / median / p95" for a in areas) + " |",
              "|---|---|" + "---|" * len(areas)]
    for name, t in res["files_per_window"].items():
        cells = [f"{t[a]['mean']:.2f} / {t[a]['median']:g} / {t[a]['p95']:g}" if a in t else "" for a in areas]
        files = next(iter(t.values()))["files"] if t else ""
        lines.append(f"| {name} | {files} | " + " | ".join(cells) + " |")
    reads = res.get("duckdb_reads", {})
    areas = sorted({a for t in reads.values() for a in t}, key=float, reverse=True)
    lines += ["", "DuckDB per window, medians: files read / row groups in them / row groups read / MiB read",
              "", "| output | " + " | ".join(f"{float(a) * 100:g}%" for a in areas) + " |",
              "|---|" + "---|" * len(areas)]
    for name, t in reads.items():
        cells = [f"{t[a]['median_files']:g} / {t[a]['median_row_groups_planned']:g} / "
                 f"{t[a]['median_row_groups_read']:g} / {t[a]['median_bytes_read'] / 2**20:.2f}"
                 if a in t else "" for a in areas]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
