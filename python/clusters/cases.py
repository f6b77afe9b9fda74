"""What the cluster tests of the drivers (python/spark/test_spark.py,
python/ray/test_ray.py) share: a warehouse of generated tables, what they
look like on disk, and the cases that do not depend on the engine (a
killed worker, a killed driver, a conflicting writer), each given the
driver's run function and module."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from types import ModuleType
from typing import Any

import geocompact

#: The rewrite options every case runs with.
OPTS = {"min-input-files": 2}


class Lake:
    """A warehouse of generated tables in a fresh folder, removed when the
    process exits, with an empty config file so that no machine config is
    read."""

    def __init__(self, prefix: str) -> None:
        self.bin = os.environ["GEOCOMPACT_BINARY"]
        self.work = tempfile.mkdtemp(prefix=prefix)
        atexit.register(self._remove, os.getpid())
        self.wh = os.path.join(self.work, "warehouse")
        self.cfg = os.path.join(self.work, "geocompact.yaml")
        with open(self.cfg, "w") as f:
            f.write("{}\n")

    def _remove(self, owner: int) -> None:
        """Removes the folder when the process that made it exits (not a
        forked child of it)."""
        if os.getpid() == owner:
            shutil.rmtree(self.work, ignore_errors=True)

    def gc(self, *args: str) -> str:
        p = subprocess.run([self.bin, "--warehouse", self.wh, "--config", self.cfg, *args],
                           capture_output=True, text=True)
        assert p.returncode == 0, f"geocompact {' '.join(args)}: exit {p.returncode}: {p.stderr}"
        return p.stdout

    def generate(self, table: str, rows: int, seed: int = 1) -> None:
        """A table of rows points in 8 commits, in two bucket partitions:
        two groups to rewrite."""
        self.gc("generate", "--table", table, "--rows", str(rows), "--commits", "8", "--partition-by",
                "bucket(2, id)", "--seed", str(seed))

    def twin(self, table: str, rows: int, seed: int) -> None:
        """Generates table and its twin, and rewrites the twin locally."""
        self.generate(table, rows, seed)
        self.generate(table + "_twin", rows, seed)
        self.gc("rewrite", "--table", table + "_twin", "--curve", "hilbert", "--option", "min-input-files=2")

    def snapshots(self, table: str) -> int:
        return len(json.loads(self.gc("inspect", "snapshots", "--table", table, "--json")))

    def live(self, table: str) -> list[str]:
        return [f["file_path"].removeprefix("file://")
                for f in json.loads(self.gc("inspect", "files", "--table", table, "--json"))]

    def files_under(self, table: str, part: str) -> list[str]:
        ns, name = table.split(".")
        out = []
        for d, _, names in os.walk(os.path.join(self.wh, ns + ".db", name)):
            out += [os.path.join(d, n) for n in names if part in n]
        return out

    def content(self, table: str) -> Counter:
        """The multiset of the md5s of the live data files."""
        return Counter(hashlib.md5(open(p, "rb").read()).hexdigest() for p in self.live(table))


def tag(job_id: str) -> str:
    """The tag a job's file names carry."""
    return f"{job_id[:8]}-{job_id[8:12]}-{job_id[12:16]}-"


def run_killing(lake: Lake, name: str, victim: Callable[[int], int], written: Callable[[], list[str]],
                run: Callable[[dict[str, str]], Any]) -> tuple[Any, dict[str, Any]]:
    """Runs run(env) with a pause file named name: the first unit to write
    pauses, and victim(its pid) is SIGKILLed once written() has listed
    the files it wrote. Returns the run and what was killed (pid, victim,
    files)."""
    pause = os.path.join(lake.work, name)
    killed: dict[str, Any] = {}

    def killer() -> None:
        while not os.path.exists(pause) or not open(pause).read():
            time.sleep(0.05)
        pid = int(open(pause).read())
        time.sleep(0.2)
        killed["files"] = written()
        killed["pid"], killed["victim"] = pid, victim(pid)
        os.kill(killed["victim"], signal.SIGKILL)

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    r = run({"GEOCOMPACT_TEST_JOB_PAUSE_FILE": pause})
    th.join(5)
    assert "pid" in killed, "no worker paused"
    return r, killed


def case_killed_worker(lake: Lake, run: Callable[..., Any], victim: Callable[[int], int]) -> dict[str, Any]:
    """A unit pauses after writing its files; victim(pid of its geocompact
    process) names the process to SIGKILL. The engine retries the unit:
    exactly one snapshot, the output of the local rewrite of a twin table,
    and no file of the killed attempt left. Returns the run and what was
    killed."""
    lake.twin("geo.b", 60_000, seed=7)
    before = lake.snapshots("geo.b")
    # The files the paused attempt wrote: its job's tagged data files.
    r, killed = run_killing(lake, "pause", victim, lambda: [p for p in lake.files_under("geo.b", ".parquet")
                                                         if "/data/" in p],
                            lambda env: run("geo.b", env=env))
    assert all(u["pid"] != killed["pid"] for u in r.units), "the killed attempt's result was committed"
    assert lake.snapshots("geo.b") == before + 1, "want exactly one new snapshot"
    assert lake.content("geo.b") == lake.content("geo.b_twin"), "output differs from the local rewrite of the twin"
    job = r.units[0]["job"]
    live = lake.live("geo.b")
    lost = [p for p in killed["files"] if tag(job) in p and p not in live]
    assert lost, f"the killed attempt wrote no file: {killed['files']}"
    left = [p for p in lake.files_under("geo.b", tag(job)) if p not in live]
    assert not left and not any(os.path.exists(p) for p in lost), f"files of the killed attempt left: {left or lost}"
    killed["lost"] = lost
    return {"run": r, **killed}


#: A group over the worker's budget: spread over the workers in stages.
SHUFFLE_OPTS = {"rewrite-all": "true", "max-group-memory-bytes": 96 << 20, "target-file-size-bytes": 700_000}


def case_shuffled(lake: Lake, run: Callable[..., Any], victim: Callable[[int], int]) -> dict[str, Any]:
    """One unpartitioned group over the workers' budget runs as scatter,
    bucket and span units; the first unit (a scatter) is killed after it
    wrote its shuffle files and is retried. Exactly one snapshot, the
    files of the local (spilled) rewrite of a twin table, and no file of
    the job but the committed ones left, shuffle files included."""
    for t in ("geo.g", "geo.g_twin"):
        lake.gc("generate", "--table", t, "--rows", "240000", "--commits", "12", "--seed", "3")
    opts = [a for k, v in SHUFFLE_OPTS.items() for a in ("--option", f"{k}={v}")]
    lake.gc("rewrite", "--table", "geo.g_twin", "--curve", "hilbert", *opts)
    before = lake.snapshots("geo.g")
    r, killed = run_killing(lake, "pause-shuffle", victim, list,
                            lambda env: run("geo.g", options=SHUFFLE_OPTS, env=env))
    assert r.result.verified and lake.snapshots("geo.g") == before + 1, r.result
    kinds = Counter(u.get("kind") for u in r.units)
    assert kinds["scatter"] >= 2 and kinds["bucket"] >= 2 and kinds["span"] >= 1, kinds
    assert all(u["pid"] != killed["pid"] for u in r.units), "the killed attempt's result was used"
    assert lake.content("geo.g") == lake.content("geo.g_twin"), "output differs from the local rewrite of the twin"
    live = lake.live("geo.g")
    left = [p for p in lake.files_under("geo.g", tag(r.units[0]["job"])) if p not in live]
    assert not left, f"files of the job left: {left}"
    return {"run": r, "kinds": kinds, **killed}


def case_killed_driver(lake: Lake, run: Callable[..., Any], driver: str, *argv: str) -> str:
    """driver (a Python script run with the warehouse, the config and
    argv) kills itself before its commit of geo.c; a rerun commits and
    sweeps what the killed job left. Returns the killed job's id."""
    lake.generate("geo.c", 20_000)
    before = lake.snapshots("geo.c")
    p = subprocess.run([sys.executable, "-c", driver, lake.wh, lake.cfg, *argv], capture_output=True, text=True,
                       timeout=180)
    assert p.returncode == -signal.SIGKILL, f"the driver exited {p.returncode}: {p.stderr[-2000:]}"
    markers = lake.files_under("geo.c", "geocompact-job-")
    assert len(markers) == 1, f"want the killed job's marker: {markers}"
    dead = os.path.basename(markers[0]).removeprefix("geocompact-job-").split(".")[0]
    assert lake.files_under("geo.c", tag(dead)), "the killed job wrote nothing"
    assert lake.snapshots("geo.c") == before
    r = run("geo.c")
    assert r.result.verified and lake.snapshots("geo.c") == before + 1
    assert not lake.files_under("geo.c", tag(dead)) and not lake.files_under("geo.c", "geocompact-job-"), \
        "the rerun did not sweep the killed job"
    return dead


def case_conflict(lake: Lake, run: Callable[..., Any], driver: ModuleType) -> None:
    """Another rewrite commits between the units and the commit (the
    driver module's _before_commit hook): CommitConflict (exit 4), nothing
    committed, nothing of the job left."""
    lake.generate("geo.d", 20_000)
    pre = set(lake.files_under("geo.d", ".parquet"))
    state: dict[str, Any] = {}

    def writer() -> None:
        state["job_files"] = set(lake.files_under("geo.d", ".parquet")) - pre
        lake.gc("rewrite", "--table", "geo.d", "--option", "rewrite-all")
        state["snapshots"], state["live"] = lake.snapshots("geo.d"), sorted(lake.live("geo.d"))

    driver._before_commit = writer  # type: ignore[attr-defined]
    try:
        run("geo.d")
    except geocompact.CommitConflict as e:
        assert e.exit_code == 4, e
    else:
        raise AssertionError("no CommitConflict")
    finally:
        driver._before_commit = None  # type: ignore[attr-defined]
    assert state["job_files"], "the units wrote nothing"
    assert lake.snapshots("geo.d") == state["snapshots"] and sorted(lake.live("geo.d")) == state["live"], "committed"
    assert not lake.files_under("geo.d", "geocompact-job-"), "the job's marker stayed"
    left = [p for p in state["job_files"] if os.path.exists(p)]
    assert not left, f"the job's files stayed: {left}"


def run_cases(cases: dict[str, Callable[[], None]]) -> None:
    """Runs the cases in order, timing each."""
    for name, case in cases.items():
        t0 = time.time()
        case()
        print(f"    {name}: {time.time() - t0:.1f}s", flush=True)
