#!/usr/bin/env bash
# interop/run.sh runs the interop suite: geocompact's tables read, written
# and compacted by the real peers (Spark with Iceberg and Delta, PyIceberg,
# delta-rs, DuckDB), pinned in interop/requirements.txt and interop/pom.xml.
#
#   interop/run.sh [PYTEST ARGS...]
#
# It makes (or reuses) the cached virtualenv and jars (interop/setup.sh),
# builds geocompact once, then runs each half as its own pytest process,
# because each owns one JVM: interop/iceberg, then interop/delta when it
# exists. Any failure, and a half that collects no tests (pytest exit 5),
# fails the run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

eval "$("$here/setup.sh")"

if [[ -z "${GEOCOMPACT_BIN:-}" ]]; then
	bindir="$(mktemp -d)"
	trap 'rm -rf "$bindir"' EXIT
	(cd "$root" && go build -o "$bindir/geocompact" ./cmd/geocompact)
	export GEOCOMPACT_BIN="$bindir/geocompact"
fi

status=0
for half in iceberg delta; do
	dir="$here/$half"
	[[ -d "$dir" ]] || continue
	echo "==> interop: $half"
	rc=0
	(cd "$here" && "$GEOCOMPACT_INTEROP_PYTHON" -m pytest -p no:cacheprovider "$dir" "$@") || rc=$?
	if [[ $rc -eq 5 ]]; then
		echo "interop/run.sh: $half collected no tests" >&2
	fi
	if [[ $rc -ne 0 ]]; then
		echo "interop/run.sh: $half failed (pytest exit $rc)" >&2
		status=1
	fi
done
exit $status
