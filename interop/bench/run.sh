#!/usr/bin/env bash
# interop/bench/run.sh: geocompact against the compactors its users would
# otherwise run (Spark's rewrite_data_files with Iceberg, delta-rs OPTIMIZE,
# Delta's OPTIMIZE ZORDER BY on Spark), side by side on twins of one
# generated table: times, peak memory, files planned per bbox window
# counted by geocompact's bench and by Spark's own scan planning, and the
# row groups and bytes DuckDB reads per window (docs/perf.md and
# docs/layouts.md, "Against the peers").
#
#   interop/bench/run.sh            1,500,000 clustered points in 300 files,
#                                   1 MiB target, three alternating rounds
#   interop/bench/run.sh --smoke    150,000 points in 30 files, one round
#                                   (the .ci/run step)
#   interop/bench/run.sh --large    about 1 GiB: 20,000,000 points in 300
#                                   commits, partitioned by day(ts), 128 MiB
#                                   target
#   interop/bench/run.sh --help     every option (rows, files, target,
#                                   rounds, windows, --only)
#
# It uses the interop suite's cached virtualenv and jars (interop/setup.sh)
# and builds geocompact from this checkout unless GEOCOMPACT_BIN is set. It
# fails when a peer's row count differs from the input's, when bench and
# Spark count different files for any window set, or when DuckDB's reads
# meet other files than Spark planned. The results are written
# as JSON (default /tmp/geocompact-peerbench/results.json) and printed as
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

"$GEOCOMPACT_INTEROP_PYTHON" "$here/peerbench.py" --geocompact "$GEOCOMPACT_BIN" "$@"
