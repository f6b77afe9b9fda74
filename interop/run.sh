#!/usr/bin/env bash
# interop/run.sh runs the interop suite: geocompact's tables read, written
# and compacted by the real peers (Spark with Iceberg and Delta, PyIceberg,
# delta-rs, DuckDB), pinned in interop/requirements.txt and interop/pom.xml.
#
#   interop/run.sh [--services] [PYTEST ARGS...]
#
# --services starts the loopback S3 server (scripts/start-s3.sh) and the
# test REST catalog (scripts/start-rest.sh) for this run and stops them at
# the end, unless their variables are already set (.ci/run starts both
# itself). Without them, the S3 and REST tests (interop/iceberg/test_s3.py,
# test_rest.py) skip, naming the script; under CI=true they fail.
#
# It makes (or reuses) the cached virtualenv and jars (interop/setup.sh),
# builds geocompact once, then runs each half as its own pytest process,
# because each owns one JVM: interop/iceberg, then interop/delta when it
# exists. Any failure fails the run, and so does a half that collects no
# tests (pytest exit 5) when no pytest arguments were given; with arguments
# (a -k filter, a test path) only a run where no half collects any does.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"

cleanup=()
on_exit() {
	local i
	for ((i = ${#cleanup[@]} - 1; i >= 0; i--)); do
		eval "${cleanup[i]}" || true
	done
}
trap on_exit EXIT

if [[ "${1:-}" == --services ]]; then
	shift
	if [[ -z "${GEOCOMPACT_TEST_S3_ENDPOINT:-}" ]]; then
		. "$root/scripts/start-s3.sh"
		cleanup+=("'$root/scripts/start-s3.sh' stop '$GEOCOMPACT_S3_DIR' && rm -rf '$GEOCOMPACT_S3_DIR'")
	fi
	# After S3, so that the REST server reaches the same object store.
	if [[ -z "${GEOCOMPACT_TEST_REST_URI:-}" ]]; then
		. "$root/scripts/start-rest.sh"
		cleanup+=("'$root/scripts/start-rest.sh' stop '$GEOCOMPACT_REST_DIR' && rm -rf '$GEOCOMPACT_REST_DIR'")
	fi
fi

eval "$("$here/setup.sh")"

if [[ -z "${GEOCOMPACT_BIN:-}" ]]; then
	bindir="$(mktemp -d)"
	cleanup+=("rm -rf '$bindir'")
	(cd "$root" && go build -o "$bindir/geocompact" ./cmd/geocompact)
	export GEOCOMPACT_BIN="$bindir/geocompact"
fi

status=0 collected=0
for half in iceberg delta; do
	dir="$here/$half"
	[[ -d "$dir" ]] || continue
	echo "==> interop: $half"
	rc=0
	(cd "$here" && "$GEOCOMPACT_INTEROP_PYTHON" -m pytest -p no:cacheprovider "$dir" "$@") || rc=$?
	if [[ $rc -eq 5 ]]; then
		echo "interop/run.sh: $half collected no tests" >&2
		[[ $# -gt 0 ]] && continue
	fi
	collected=1
	if [[ $rc -ne 0 ]]; then
		echo "interop/run.sh: $half failed (pytest exit $rc)" >&2
		status=1
	fi
done
if [[ $collected -eq 0 ]]; then
	echo "interop/run.sh: no half collected any test" >&2
	status=1
fi
exit $status
