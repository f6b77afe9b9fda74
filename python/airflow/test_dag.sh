#!/usr/bin/env bash
# python/airflow/test_dag.sh runs the example DAG (dags/geocompact_maintain.py,
# shown in docs/scheduling.md) under `airflow dags test` against a local
# table: a clean run (ingest -> validate -> maintain), a run whose landing
# files have violations (the ingest task fails, the violations in its log),
# and a run that finds the table's maintenance lease held by another run
# (the maintain task fails with exit 4, is up for Airflow's retry, and the
# table is left as it was). It also checks that docs/scheduling.md shows
# the DAG file as it is.
#
# Airflow is pinned (requirements.txt) in its own virtualenv, cached under
# GEOCOMPACT_PYTHON_CACHE (default ~/.cache/geocompact/python); the wheel
# is built by ../build_wheel.sh and installed there when it changed. The
# fixtures are written with python/test_wheel.sh's virtualenv (pyarrow,
# PyIceberg), which must exist: run python/test_wheel.sh first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="$(cd "$here/.." && pwd)"
cache="${GEOCOMPACT_PYTHON_CACHE:-$HOME/.cache/geocompact/python}"
mkdir -p "$cache"

venv="$cache/airflow-$(sha256sum "$here/requirements.txt" | cut -c1-12)"
if [[ ! -x "$venv/bin/python" || ! -f "$venv/.done" ]]; then
	rm -rf "$venv"
	python3 -m venv "$venv"
	"$venv/bin/pip" install --quiet --upgrade pip
	"$venv/bin/pip" install --quiet -r "$here/requirements.txt"
	touch "$venv/.done"
fi
testvenv="$cache/test-$(sha256sum "$py/requirements-test.txt" | cut -c1-12)"
[[ -f "$testvenv/.done" ]] || { echo "test_dag.sh: run python/test_wheel.sh first (it makes $testvenv)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
wheel="$(GEOCOMPACT_WHEEL_DIR="$work/dist" "$py/build_wheel.sh" | tail -n 1)"
sum="$(sha256sum "$wheel" | cut -c1-64)"
if [[ "$(cat "$venv/.wheel" 2>/dev/null || true)" != "$sum" ]]; then
	"$venv/bin/pip" install --quiet --no-deps --force-reinstall "$wheel"
	echo "$sum" >"$venv/.wheel"
fi

"$venv/bin/python" - "$py/../docs/scheduling.md" "$here/dags/geocompact_maintain.py" <<'PY'
import sys
docs, dag = (open(p).read() for p in sys.argv[1:])
sys.exit(0 if dag.strip() in docs else "docs/scheduling.md does not show dags/geocompact_maintain.py as it is")
PY

export AIRFLOW_HOME="$work/airflow" AIRFLOW__CORE__DAGS_FOLDER="$here/dags" AIRFLOW__CORE__LOAD_EXAMPLES=False
export PATH="$venv/bin:$PATH"
airflow db migrate >"$work/migrate.log" 2>&1 || { cat "$work/migrate.log" >&2; exit 1; }

wh="$work/warehouse"
mkdir -p "$work/good" "$work/bad" "$work/more" "$work/more2"
cat >"$work/policy.yaml" <<'YAML'
gate:
  min-avg-file-bytes: 1073741824
rewrite:
  curve: hilbert
  options:
    min-input-files: "2"
expire:
  every: 0s
  older-than: 1h
orphans:
  every: 0s
  older-than: 1h
YAML
(cd "$py/tests" && "$testvenv/bin/python" -c "
import sys
from pathlib import Path
from conftest import write_geoparquet
w = Path(sys.argv[1])
for i in range(4):
    write_geoparquet(w / 'good' / f'day{i}.parquet', 500, offset=i)
write_geoparquet(w / 'bad' / 'broken.parquet', 100, bad_rows=4)
write_geoparquet(w / 'more' / 'day9.parquet', 500, offset=9)
write_geoparquet(w / 'more2' / 'day12.parquet', 500, offset=12)
" "$work")

conf() { printf '{"table": "gis.telemetry", "catalog": "", "warehouse": "%s", "landing": "%s", "policy": "%s"}' "$wh" "$1" "$work/policy.yaml"; }
dagtest() { # dagtest NAME DATE LANDING: runs the DAG, keeps its output in $work/NAME.log
	last="$1"
	echo "==> airflow dags test: $last" >&2
	set +e
	airflow dags test geocompact_maintain "$2" -c "$(conf "$3")" >"$work/$last.log" 2>&1
	code=$?
	set -e
}
# dagtest_until NAME DATE LANDING PATTERN: as dagtest, but stops the run
# once its log matches PATTERN (a task waiting out its retry delay would
# keep airflow dags test polling for minutes).
dagtest_until() {
	last="$1"
	echo "==> airflow dags test: $last (until /$4/)" >&2
	: >"$work/$last.log"
	airflow dags test geocompact_maintain "$2" -c "$(conf "$3")" >"$work/$last.log" 2>&1 &
	local pid=$! deadline=$((SECONDS + 600))
	until grep -q "$4" "$work/$last.log"; do
		if ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
			break
		fi
		sleep 2
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	grep -q "$4" "$work/$last.log" || fail "$last: the log never showed /$4/"
}
fail() { echo "test_dag.sh: $*" >&2; tail -n 80 "$work/$last.log" >&2; exit 1; }
files() { "$venv/bin/geocompact" --warehouse "$wh" metrics --table gis.telemetry --json | "$venv/bin/python" -c 'import json,sys; d=json.load(sys.stdin); print(d["file_count"], d["total_records"])'; }

# 1. A first run: four files in one commit, validated; one data file, so
# the gate does not fire.
dagtest first 2026-01-02 "$work/good"
[[ $code -eq 0 ]] || fail "first run: airflow dags test exited $code"
grep -q "ingested 4 files, 2000 rows" "$work/first.log" || fail "first run: ingest did not log its result"
grep -q "gate: nothing to do" "$work/first.log" || fail "first run: the gate fired on one file"
[[ "$(files)" == "1 2000" ]] || fail "first run: table has $(files) (files rows), want 1 2000"

# 2. A second day: two small files, so the gate fires and maintain
# rewrites them under the lease, expires and removes orphans.
dagtest second 2026-01-03 "$work/more"
[[ $code -eq 0 ]] || fail "second run: airflow dags test exited $code"
grep -q "rewrite: done" "$work/second.log" || fail "second run: no completed rewrite step in the log"
grep -q "expire: done" "$work/second.log" || fail "second run: no expire step in the log"
grep -q "orphans: done" "$work/second.log" || fail "second run: no orphans step in the log"
[[ "$(files)" == "1 2500" ]] || fail "second run: table has $(files), want 1 2500"

# 3. Violations: the ingest task fails, naming the file and its violations,
# and nothing is written.
dagtest bad 2026-01-04 "$work/bad"
grep -q "violations in $work/bad/broken.parquet: " "$work/bad.log" || fail "bad run: violations not in the log"
grep -qi "AirflowFailException" "$work/bad.log" || fail "bad run: the task did not fail"
[[ "$(files)" == "1 2500" ]] || fail "bad run changed the table: $(files)"

# 4. Another run holds the lease (as an overlapping run would): maintain
# exits 4, the task waits for Airflow's retry, the table keeps its files
# (the new day is ingested, not compacted).
(cd "$py/tests" && "$testvenv/bin/python" -c "
import sys, time
from pyiceberg.catalog.sql import SqlCatalog
wh = sys.argv[1]
tbl = SqlCatalog('geocompact', uri=f'sqlite:///{wh}/catalog.db', warehouse=f'file://{wh}').load_table('gis.telemetry')
tbl.manage_snapshots().create_tag(tbl.current_snapshot().snapshot_id, 'geocompact-maintain-lease').commit()
with tbl.transaction() as tx:
    tx.set_properties({'geocompact.maintain.lease-owner': 'overlapping-run', 'geocompact.maintain.lease-expires-ms': str(int((time.time() + 3600) * 1000))})
" "$wh")
dagtest_until leased 2026-01-05 "$work/more2" 'geocompact_maintain.maintain .*up_for_retry'
grep -q "overlapping-run" "$work/leased.log" || fail "leased run: the lease holder is not named in the log"
grep -qi "CommitConflict" "$work/leased.log" || fail "leased run: maintain did not fail with CommitConflict"
[[ "$(files)" == "2 3000" ]] || fail "leased run: table has $(files), want 2 3000 (ingested, not compacted)"
echo "airflow DAG: 4 passed, 0 failed"
