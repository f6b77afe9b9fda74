"""The rewrite on a real Ray cluster (Ray's test cluster: a head with no
CPUs and two worker nodes of one CPU each, every one its own raylet and
worker processes): run by python/ray/test_ray.sh.

(a) units on the two nodes overlap in time; (b) a Ray worker killed after
its unit wrote its files: retried, one snapshot, the output of
`geocompact rewrite` on a twin table, no file of the killed attempt left;
(c) a driver killed before its commit: a rerun commits and sweeps what the
killed job left; (d) a conflicting writer between plan and commit:
CommitConflict, nothing committed, nothing of the job left; (e) bad
arguments; (g) one group over the workers' budget in stages, a scatter
worker killed. The cases (b)-(d) and (g) are python/clusters/cases.py's,
shared with the Spark test.
"""

from __future__ import annotations

import os
import socket
import sys
from datetime import datetime
from typing import Any

import ray
from ray.cluster_utils import Cluster

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clusters"))

import cases  # noqa: E402
from cases import OPTS, Lake  # noqa: E402

import geocompact  # noqa: E402
import geocompact.ray as gr  # noqa: E402

LAKE = Lake("geocompact-ray-test-")


def run(table: str, **kw: Any) -> Any:
    return gr.run(table, curve="hilbert", **{"options": OPTS, **kw}, warehouse=LAKE.wh, config=LAKE.cfg,
                  ship_binary=True)


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def case_overlap() -> None:
    # Two whole groups of over a second each: Ray may hand the second
    # node its task a few hundred milliseconds late (a spillback, a worker
    # started), which units of 0.3 s did not always outlast. Not shuffled,
    # so that each group is one unit.
    LAKE.generate("geo.a", 1_000_000)
    r = run("geo.a", shuffle="never")
    assert r.result.verified and r.result.added_data_files_count == 2, r.result
    a, b = r.units
    assert a["node"] != b["node"], f"both units ran on one node: {r.units}"
    t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
    overlap = min(t(a["end"]), t(b["end"])) - max(t(a["start"]), t(b["start"]))
    assert overlap.total_seconds() > 0, f"units did not overlap: {r.units}"
    print(f"(a) two units overlapped {overlap.total_seconds():.2f}s on nodes {a['node'][:8]} and {b['node'][:8]}")


def case_killed_worker() -> None:
    # The Ray worker running the task is killed (its geocompact child dies
    # with it): Ray replaces the worker and retries the task.
    k = cases.case_killed_worker(LAKE, run, victim=parent_of)
    assert all(u["executor"] != k["victim"] for u in k["run"].units), "the killed worker reported a result"
    print(f"(b) Ray worker {k['victim']} killed after its unit wrote {len(k['lost'])} file(s): retried, "
          "one snapshot, output equal to the local rewrite's, its files deleted")


def case_shuffled() -> None:
    k = cases.case_shuffled(LAKE, run, victim=parent_of)
    print(f"(g) one group over the budget in stages {dict(k['kinds'])}, a scatter worker killed: retried, "
          "one snapshot, the local rewrite's files, no shuffle file left")


DRIVER = r"""
import os, signal, sys
import ray
import geocompact.ray as gr
ray.init(address=sys.argv[3])
gr._before_commit = lambda: os.kill(os.getpid(), signal.SIGKILL)
gr.run("geo.c", curve="hilbert", options={"min-input-files": 2}, warehouse=sys.argv[1], config=sys.argv[2])
"""


def case_killed_driver(address: str) -> None:
    dead = cases.case_killed_driver(LAKE, run, DRIVER, address)
    print(f"(c) driver killed before its commit: the rerun committed and swept job {dead}")


def case_conflict() -> None:
    cases.case_conflict(LAKE, run, gr)
    print("(d) a conflicting writer: CommitConflict (exit 4), nothing committed, the job's files deleted")


def case_bad_arguments() -> None:
    LAKE.generate("geo.e", 20_000)
    before = LAKE.snapshots("geo.e")
    for kw in ({"num_cpus": 0}, {"max_retries": -1}, {"memory": 0}):
        try:
            run("geo.e", **kw)
        except ValueError as e:
            assert "want num_cpus > 0" in str(e), e
        else:
            raise AssertionError(f"{kw} was taken")
    try:
        gr.run("geo.e", curve="hilbert", options={"min-input": 2}, warehouse=LAKE.wh, config=LAKE.cfg)
    except geocompact.UsageError as e:
        assert "min-input" in str(e), e
    else:
        raise AssertionError("an unknown option was taken")
    assert LAKE.snapshots("geo.e") == before and not LAKE.files_under("geo.e", "geocompact-job-")
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
        cases.run_cases({"overlap": case_overlap, "killed worker": case_killed_worker,
                         "shuffled": case_shuffled,
                         "killed driver": lambda: case_killed_driver(cluster.address), "conflict": case_conflict,
                         "bad arguments": case_bad_arguments})
    finally:
        ray.shutdown()
        cluster.shutdown()
    print("ray: all cases passed")


if __name__ == "__main__":
    main()
