#!/usr/bin/env bash
# interop/setup.sh makes the interop suite's cached virtualenv and jar
# folders, and prints the variables that point at them (eval its output).
# A rerun with the same pins installs nothing: each folder is keyed by a
# hash of the files that pin it.
#
#   eval "$(interop/setup.sh)"
#
# GEOCOMPACT_INTEROP_CACHE (default ~/.cache/geocompact/interop) is the
# cache folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${GEOCOMPACT_INTEROP_CACHE:-$HOME/.cache/geocompact/interop}"
mkdir -p "$cache"

key() { cat "$@" | sha256sum | cut -c1-12; }

venv="$cache/venv-$(key "$here/requirements.txt")"
if [[ ! -x "$venv/bin/python" || ! -f "$venv/.done" ]]; then
	rm -rf "$venv"
	python3 -m venv "$venv" >&2
	"$venv/bin/pip" install --quiet --upgrade pip >&2
	"$venv/bin/pip" install --quiet -r "$here/requirements.txt" >&2
	touch "$venv/.done"
fi

# jars DIR PROFILE [-Dprop=value...]: Maven's own client copies a profile's
# runtime dependencies into DIR.
jars() {
	local dir="$1" profile="$2"
	shift 2
	if [[ -f "$dir/.done" ]]; then
		return 0
	fi
	rm -rf "$dir"
	mkdir -p "$dir"
	if mvn -B -q -f "$here/pom.xml" -P "$profile" "$@" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dir" >&2; then
		touch "$dir/.done"
	else
		rm -rf "$dir"
		return 1
	fi
}
pom="$(key "$here/pom.xml")"
iceberg111="$cache/jars-iceberg-1.11.0-$pom"
iceberg112="$cache/jars-iceberg-1.12.0-$pom"
delta="$cache/jars-delta-4.4.0-$pom"
jars "$iceberg111" iceberg -Diceberg.version=1.11.0
# 1.12.0 adds hilbert(...) sort orders; used where it resolves.
if ! jars "$iceberg112" iceberg -Diceberg.version=1.12.0; then
	echo "interop/setup.sh: iceberg-spark-runtime 1.12.0 did not resolve; using 1.11.0 only" >&2
	iceberg112=""
fi
jars "$delta" delta

echo "export GEOCOMPACT_INTEROP_PYTHON='$venv/bin/python'"
echo "export GEOCOMPACT_INTEROP_ICEBERG_JARS='$iceberg111'"
echo "export GEOCOMPACT_INTEROP_ICEBERG112_JARS='$iceberg112'"
echo "export GEOCOMPACT_INTEROP_DELTA_JARS='$delta'"
