"""Nightly maintenance of a spatial Iceberg table with geocompact's Python API.

ingest (the day's GeoParquet) -> validate (a gate: violations fail the run)
-> maintain (rewrite, verify, expire, orphans under the table's lease).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from airflow.sdk import dag, task
from airflow.sdk.exceptions import AirflowFailException

import geocompact

log = logging.getLogger(__name__)


def _reach(params: dict[str, Any]) -> dict[str, Any]:
    """The catalog arguments every call shares: a catalog name (geocompact's
    config or ~/.pyiceberg.yaml), else the embedded catalog's warehouse."""
    return {"catalog": params["catalog"] or None, "warehouse": params["warehouse"] or None,
            "logger": log}


def _fail_on(e: geocompact.GeocompactError) -> None:
    """Exit 2 and 3 will not pass on a retry: fail the task without one.
    Exit 4 (a commit race, a held lease) and exit 1 are left to Airflow's
    retries."""
    if isinstance(e, geocompact.ValidationError):
        for v in e.violations:
            log.error("violations in %s: %d %s; examples %s", v.input, v.violations, v.counts, v.examples[:5])
        raise AirflowFailException(str(e)) from e
    if isinstance(e, geocompact.UsageError):
        raise AirflowFailException(str(e)) from e


@dag(
    schedule="17 2 * * *",
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 3, "retry_delay": timedelta(minutes=10)},
    params={
        "table": "gis.telemetry",
        "catalog": "prod",
        "warehouse": "",
        "landing": "/data/landing/telemetry",
        "policy": "/etc/geocompact/telemetry.yaml",
    },
    tags=["iceberg", "maintenance"],
)
def geocompact_maintain() -> None:
    @task
    def ingest(params: dict[str, Any] | None = None) -> int:
        assert params is not None  # Airflow passes the run's params
        try:
            r = geocompact.ingest(params["table"], [params["landing"]], recursive=True, create=True,
                                  add_bbox=True, **_reach(params))
        except geocompact.GeocompactError as e:
            _fail_on(e)
            raise
        log.info("ingested %d files, %d rows (snapshot %d)", r.files, r.rows, r.snapshot_id)
        return r.rows

    @task
    def validate(rows: int, params: dict[str, Any] | None = None) -> None:
        assert params is not None
        try:
            geocompact.validate(params["table"], **_reach(params))
        except geocompact.GeocompactError as e:
            _fail_on(e)
            raise

    @task(execution_timeout=timedelta(hours=2))  # at most the policy's lease.ttl
    def maintain(params: dict[str, Any] | None = None) -> dict[str, str]:
        assert params is not None
        try:
            rep = geocompact.maintain(params["table"], policy=params["policy"] or None, **_reach(params))
        except geocompact.GeocompactError as e:
            _fail_on(e)
            raise
        for s in rep.steps:
            log.info("%s: %s %s", s.step, s.status, s.detail)
        return {s.step: s.status for s in rep.steps}

    validate(ingest()) >> maintain()


geocompact_maintain()
