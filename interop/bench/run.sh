#!/usr/bin/env bash
# interop/bench/run.sh: geocompact against the compactors its users would
# otherwise run (Spark's rewrite_data_files with Iceberg, delta-rs OPTIMIZE,
# Delta's OPTIMIZE ZORDER BY on Spark), side by side on twins of one
# generated table: times, peak memory, and files planned per bbox window
# counted by geocompact's bench and by Spark's own scan planning
# (docs/perf.md and docs/layouts.md, "Against the peers").
#
#   interop/bench/run.sh            1,500,000 clustered points in 300 files,
#                                   1 MiB target, three alternating rounds
#   interop/bench/run.sh --smoke    150,000 points in 30 files, one round
#                                   (the .ci/run step)
#   interop/bench/run.sh --help     every option (rows, files, target,
#                                   rounds, windows, --only)
#
# It uses the interop suite's cached virtualenv and jars (interop/setup.sh)
# and builds geocompact from this checkout unless GEOCOMPACT_BIN is set. It
# fails when a peer's row count differs from the input's or when bench and
# Spark count different files for any window set. The results are written
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

exec "$GEOCOMPACT_INTEROP_PYTHON" "$here/peerbench.py" --geocompact "$GEOCOMPACT_BIN" "$@"
