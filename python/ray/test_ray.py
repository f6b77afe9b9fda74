"""The rewrite on a real Ray cluster (Ray's test cluster: a head with no
CPUs and two worker nodes of one CPU each, every one its own raylet and
worker processes): run by python/ray/test_ray.sh.

(a) units on the two nodes overlap in time; (b) a Ray worker killed after
its unit wrote its files: retried, one snapshot, the output of
`geocompact rewrite` on a twin table, no file of the killed attempt left;
(c) a driver killed before its commit: a rerun commits and sweeps what the
killed job left; (d) a conflicting writer between plan and commit:
CommitConflict, nothing committed, nothing of the job left.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime

import ray
from ray.cluster_utils import Cluster

import geocompact
import geocompact.ray as gr

BIN = os.environ["GEOCOMPACT_BINARY"]
WORK = tempfile.mkdtemp(prefix="geocompact-ray-test-")
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


def files_under(table: str, part: str) -> list[str]:
    ns, name = table.split(".")
    out = []
    for d, _, names in os.walk(os.path.join(WH, ns + ".db", name)):
        out += [os.path.join(d, n) for n in names if part in n]
    return out


def tag(job_id: str) -> str:
    return f"{job_id[:8]}-{job_id[8:12]}-{job_id[12:16]}-"


def content(table: str) -> Counter:
    """The multiset of the md5s of the live data files."""
    return Counter(hashlib.md5(open(p, "rb").read()).hexdigest() for p in live(table))


def run(table: str, **kw):
    return gr.run(table, curve="hilbert", options=OPTS, warehouse=WH, config=CFG, ship_binary=True, **kw)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def case_overlap() -> None:
    generate("geo.a", 200_000)
    r = run("geo.a")
    assert r.result.verified and r.result.added_data_files_count == 2, r.result
    a, b = r.units
    assert a["node"] != b["node"], f"both units ran on one node: {r.units}"
    t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    overlap = min(t(a["end"]), t(b["end"])) - max(t(a["start"]), t(b["start"]))
    assert overlap.total_seconds() > 0, f"units did not overlap: {r.units}"
    print(f"(a) two units overlapped {overlap.total_seconds():.2f}s on nodes {a['node'][:8]} and {b['node'][:8]}")


def case_killed_worker() -> None:
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
        killed["files"] = [p for p in files_under("geo.b", ".parquet") if "/data/" in p]
        killed["pid"], killed["worker"] = pid, parent_of(pid)
        os.kill(int(killed["worker"]), signal.SIGKILL)  # the Ray worker running the task

    th = threading.Thread(target=killer, daemon=True)
    th.start()
    r = run("geo.b", env={"GEOCOMPACT_TEST_JOB_PAUSE_FILE": pause})
    th.join(5)
    assert "pid" in killed, "no worker paused"
    assert all(u["pid"] != killed["pid"] for u in r.units), "the killed attempt's result was committed"
    assert all(u["executor"] != killed["worker"] for u in r.units), "the killed worker reported a result"
    assert snapshots("geo.b") == before + 1, "want exactly one new snapshot"
    assert content("geo.b") == content("geo.b_twin"), "output differs from geocompact rewrite on the twin table"
    job = r.units[0]["job"]
    lost = [p for p in killed["files"] if tag(job) in p and p not in live("geo.b")]
    assert lost, f"the killed attempt wrote no file: {killed['files']}"
    left = [p for p in files_under("geo.b", tag(job)) if p not in live("geo.b")]
    assert not left and not any(os.path.exists(p) for p in lost), f"files of the killed attempt left: {left or lost}"
    print(f"(b) Ray worker {killed['worker']} killed after its unit wrote {len(lost)} file(s): retried, "
          "one snapshot, output equal to the local rewrite's, its files deleted")


DRIVER = r"""
import os, signal, sys
import ray
import geocompact.ray as gr
ray.init(address=sys.argv[3])
gr._before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
gr.run("geo.c", curve="hilbert", options={"min-input-files": 2}, warehouse=sys.argv[1], config=sys.argv[2])
"""


def case_killed_driver(address: str) -> None:
    generate("geo.c", 20_000)
    before = snapshots("geo.c")
    p = subprocess.run([sys.executable, "-c", DRIVER, WH, CFG, address], capture_output=True, text=True, timeout=180)
    assert p.returncode == -signal.SIGKILL, f"the driver exited {p.returncode}: {p.stderr[-2000:]}"
    markers = files_under("geo.c", "geocompact-job-")
    assert len(markers) == 1, f"want the killed job's marker: {markers}"
    dead = os.path.basename(markers[0]).removeprefix("geocompact-job-").split(".")[0]
    assert files_under("geo.c", tag(dead)), "the killed job wrote nothing"
    assert snapshots("geo.c") == before
    r = run("geo.c")
    assert r.result.verified and snapshots("geo.c") == before + 1
    assert not files_under("geo.c", tag(dead)) and not files_under("geo.c", "geocompact-job-"), \
        "the rerun did not sweep the killed job"
    print(f"(c) driver killed before its commit: the rerun committed and swept job {dead}")


def case_conflict() -> None:
    generate("geo.d", 20_000)
    pre = set(files_under("geo.d", ".parquet"))
    state: dict[str, object] = {}

    def writer() -> None:
        state["job_files"] = set(files_under("geo.d", ".parquet")) - pre
        gc("rewrite", "--table", "geo.d", "--option", "rewrite-all")
        state["snapshots"], state["live"] = snapshots("geo.d"), sorted(live("geo.d"))

    gr._before_commit = writer
    try:
        run("geo.d")
    except geocompact.CommitConflict as e:
        assert e.exit_code == 4, e
    else:
        raise AssertionError("no CommitConflict")
    finally:
        gr._before_commit = None
    assert state["job_files"], "the units wrote nothing"
    assert snapshots("geo.d") == state["snapshots"] and sorted(live("geo.d")) == state["live"], "committed"
    assert not files_under("geo.d", "geocompact-job-"), "the job's marker stayed"
    left = [p for p in state["job_files"] if os.path.exists(p)]
    assert not left, f"the job's files stayed: {left}"
    print("(d) a conflicting writer: CommitConflict (exit 4), nothing committed, the job's files deleted")


def case_bad_arguments() -> None:
    generate("geo.e", 20_000)
    before = snapshots("geo.e")
    for kw in ({"num_cpus": 0}, {"max_retries": -1}, {"memory": 0}):
        try:
            run("geo.e", **kw)
        except ValueError as e:
            assert "want num_cpus > 0" in str(e), e
        else:
            raise AssertionError(f"{kw} was taken")
    try:
        gr.run("geo.e", curve="hilbert", options={"min-input": 2}, warehouse=WH, config=CFG)
    except geocompact.UsageError as e:
        assert "min-input" in str(e), e
    else:
        raise AssertionError("an unknown option was taken")
    assert snapshots("geo.e") == before and not files_under("geo.e", "geocompact-job-")
    print("(e) bad arguments and an unknown option refused by name; nothing planned or written")


def main() -> None:
    # The head's port from the ephemeral range: Ray's workers take ports
    # 10002-19999 for themselves.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 0, "gcs_server_port": port, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address)
    try:
        cases = {"overlap": case_overlap, "killed worker": case_killed_worker,
                 "killed driver": lambda: case_killed_driver(cluster.address), "conflict": case_conflict,
                 "bad arguments": case_bad_arguments}
        for name, case in cases.items():
            t0 = time.time()
            case()
            print(f"    {name}: {time.time() - t0:.1f}s", flush=True)
    finally:
        ray.shutdown()
        cluster.shutdown()
    print("ray: all cases passed")


if __name__ == "__main__":
    main()
