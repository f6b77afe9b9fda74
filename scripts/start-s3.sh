#!/usr/bin/env bash
# start-s3.sh starts a local S3-compatible object store for geocompact's
# tests: versitygw (Apache-2.0) with its posix backend in a temporary
# directory, listening on 127.0.0.1 only, with one bucket and random
# credentials.
#
#   . scripts/start-s3.sh          # start and export the variables below into this shell
#   scripts/start-s3.sh            # start and print `export ...` lines (eval "$(scripts/start-s3.sh)")
#   scripts/start-s3.sh stop DIR   # stop the server whose data directory is DIR
#
# Exports GEOCOMPACT_TEST_S3_ENDPOINT, GEOCOMPACT_TEST_S3_BUCKET,
# AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION and GEOCOMPACT_S3_DIR
# (the data directory; its versitygw.pid and versitygw.log are there).
#
# Settings (environment):
#   GEOCOMPACT_S3_PORT   port to listen on (default: a free one)
#   GEOCOMPACT_S3_DIR    data directory (default: a new temporary directory)
#   GEOCOMPACT_S3_BUCKET bucket name (default: geocompact)
#   GEOCOMPACT_CACHE     where versitygw is installed (default: ~/.cache/geocompact)
#   VERSITYGW_VERSION    version installed when missing (default: v1.8.0)
#
# The binary is installed with `go install` from the Go module proxy into
# $GEOCOMPACT_CACHE/bin, never into the repository.

_gc_s3_main() {
	local cache="${GEOCOMPACT_CACHE:-${HOME:-/root}/.cache/geocompact}"
	local version="${VERSITYGW_VERSION:-v1.8.0}"
	local bin="$cache/bin/versitygw"

	if [ "${1:-}" = stop ]; then
		local dir="${2:-${GEOCOMPACT_S3_DIR:-}}"
		if [ -z "$dir" ] || [ ! -f "$dir/versitygw.pid" ]; then
			echo "start-s3.sh: no server to stop (give its data directory)" >&2
			return 1
		fi
		kill "$(cat "$dir/versitygw.pid")" 2>/dev/null || true
		rm -f "$dir/versitygw.pid"
		return 0
	fi

	if [ ! -x "$bin" ]; then
		echo "start-s3.sh: installing versitygw $version into $cache/bin" >&2
		mkdir -p "$cache/bin"
		# Build outside the repository so its go.mod is not consulted.
		if ! (cd "$cache" && GOBIN="$cache/bin" GOFLAGS=-mod=mod go install "github.com/versity/versitygw/cmd/versitygw@$version") >&2; then
			echo "start-s3.sh: could not install versitygw $version" >&2
			return 1
		fi
	fi

	local dir="${GEOCOMPACT_S3_DIR:-}"
	if [ -z "$dir" ]; then
		dir="$(mktemp -d "${TMPDIR:-/tmp}/geocompact-s3.XXXXXX")"
	fi
	local bucket="${GEOCOMPACT_S3_BUCKET:-geocompact}"
	mkdir -p "$dir/root/$bucket" # a bucket of the posix backend is a directory

	local access secret port
	access="GCTEST$(od -An -N7 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F)"
	secret="gcsecret$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
	port="${GEOCOMPACT_S3_PORT:-}"

	local attempt pid ok=""
	for attempt in 1 2 3 4 5; do
		if [ -z "${GEOCOMPACT_S3_PORT:-}" ]; then
			port=$(gc_free_port start-s3.sh) || return 1
		fi
		ROOT_ACCESS_KEY="$access" ROOT_SECRET_KEY="$secret" \
			nohup "$bin" --port "127.0.0.1:$port" --quiet posix "$dir/root" >"$dir/versitygw.log" 2>&1 </dev/null &
		pid=$!
		local i
		for i in $(seq 1 150); do
			if ! kill -0 "$pid" 2>/dev/null; then
				break
			fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
				ok=1
				break
			fi
			sleep 0.1
		done
		[ -n "$ok" ] && break
		kill "$pid" 2>/dev/null || true
		[ -n "${GEOCOMPACT_S3_PORT:-}" ] && break
	done
	if [ -z "$ok" ]; then
		echo "start-s3.sh: versitygw did not start; its log:" >&2
		cat "$dir/versitygw.log" >&2
		return 1
	fi
	echo "$pid" >"$dir/versitygw.pid"

	cat >"$dir/s3.env" <<EOF
export GEOCOMPACT_TEST_S3_ENDPOINT=http://127.0.0.1:$port
export GEOCOMPACT_TEST_S3_BUCKET=$bucket
export AWS_ACCESS_KEY_ID=$access
export AWS_SECRET_ACCESS_KEY=$secret
export AWS_REGION=us-east-1
export GEOCOMPACT_S3_DIR=$dir
EOF
	chmod 600 "$dir/s3.env"
	_GC_S3_ENV="$dir/s3.env"
	echo "start-s3.sh: versitygw (pid $pid) serves bucket $bucket on http://127.0.0.1:$port from $dir" >&2
}

# gc_free_port prints a loopback port nothing listens on.
# shellcheck source=free-port.sh
. "$(dirname "${BASH_SOURCE[0]}")/free-port.sh"

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
	# Sourced: export into the caller's shell.
	_GC_S3_ENV=""
	if _gc_s3_main "$@"; then
		# shellcheck disable=SC1090
		[ -z "$_GC_S3_ENV" ] || . "$_GC_S3_ENV"
	else
		return 1
	fi
else
	set -euo pipefail
	_GC_S3_ENV=""
	_gc_s3_main "$@"
	[ -z "$_GC_S3_ENV" ] || cat "$_GC_S3_ENV"
fi
