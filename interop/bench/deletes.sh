#!/usr/bin/env bash
# interop/bench/deletes.sh: delete maintenance side by side on one table
# Spark wrote and deleted from (a v2 merge-on-read table, day(ts),
# write.delete.granularity=partition): geocompact rewrite-deletes against
# Spark's rewrite_position_delete_files (wall time, peak memory of the
# whole process tree), and the scan times of count(*) and of 1% bbox
# windows in Spark and DuckDB before, after each, after a data rewrite, and
# on the same rows written with no deletes at all.
#
#   interop/bench/deletes.sh            1,500,000 points, 30 write tasks,
#                                       200 Spark DELETE commits, three
#                                       alternating rounds
#   interop/bench/deletes.sh --smoke    150,000 points, 10 DELETEs, one round
#   interop/bench/deletes.sh --help     every option
#
# It uses the interop suite's cached virtualenv and jars (interop/setup.sh)
# and builds geocompact from this checkout unless GEOCOMPACT_BIN is set. It
# fails when any count(*) or window count differs between states or
# engines, or from Spark's count after the DELETEs. The results are written
# as JSON (default /tmp/geocompact-deletebench/results.json) and printed as
# Markdown tables.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"

eval "$("$root/interop/setup.sh")"

if [[ -z "${GEOCOMPACT_BIN:-}" ]]; then
	bindir="$(mktemp -d)"
	trap 'rm -rf "$bindir"' EXIT
	(cd "$root" && go build -o "$bindir/geocompact" ./cmd/geocompact)
	GEOCOMPACT_BIN="$bindir/geocompact"
fi

"$GEOCOMPACT_INTEROP_PYTHON" "$here/deletebench.py" --geocompact "$GEOCOMPACT_BIN" "$@"
