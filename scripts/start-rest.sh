#!/usr/bin/env bash
# start-rest.sh starts geocompact's test-only Iceberg REST catalog server
# (internal/testing/restcatalog) as its own process on a free loopback port, with a
# random OAuth2 client credential, for the REST integration tests.
#
#   . scripts/start-rest.sh          # start and export the variables below into this shell
#   scripts/start-rest.sh            # start and print `export ...` lines (eval "$(scripts/start-rest.sh)")
#   scripts/start-rest.sh stop DIR   # stop the server whose state directory is DIR
#
# Exports GEOCOMPACT_TEST_REST_URI, GEOCOMPACT_TEST_REST_CREDENTIAL
# (client-id:secret) and GEOCOMPACT_REST_DIR (state directory: the server's
# own warehouse, its binary, rest.pid and rest.log).
#
# When GEOCOMPACT_TEST_S3_ENDPOINT is set (start scripts/start-s3.sh first),
# the server is given that endpoint and AWS_REGION for s3:// warehouses, and
# reads the key pair from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.

_gc_rest_main() {
	if [ "${1:-}" = stop ]; then
		local dir="${2:-${GEOCOMPACT_REST_DIR:-}}"
		if [ -z "$dir" ] || [ ! -f "$dir/rest.pid" ]; then
			echo "start-rest.sh: no server to stop (give its state directory)" >&2
			return 1
		fi
		kill "$(cat "$dir/rest.pid")" 2>/dev/null || true
		rm -f "$dir/rest.pid"
		return 0
	fi

	local root dir
	root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
	dir="${GEOCOMPACT_REST_DIR:-}"
	if [ -z "$dir" ]; then
		dir="$(mktemp -d "${TMPDIR:-/tmp}/geocompact-rest.XXXXXX")"
	fi
	mkdir -p "$dir"
	if ! (cd "$root" && go build -o "$dir/geocompact-rest-test-server" ./internal/testing/restcatalog/cmd/geocompact-rest-test-server) >&2; then
		echo "start-rest.sh: could not build the server" >&2
		return 1
	fi

	local secret args
	secret="gcrest$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
	args=(--listen 127.0.0.1:0 --warehouse "$dir/warehouse" --state-dir "$dir/state"
		--credential "geocompact:$secret" --addr-file "$dir/rest.addr")
	if [ -n "${GEOCOMPACT_TEST_S3_ENDPOINT:-}" ]; then
		args+=(--prop "s3.endpoint=$GEOCOMPACT_TEST_S3_ENDPOINT" --prop "s3.region=${AWS_REGION:-us-east-1}"
			--prop s3.force-virtual-addressing=false)
	fi
	mkdir -p "$dir/state"
	rm -f "$dir/rest.addr"
	nohup "$dir/geocompact-rest-test-server" "${args[@]}" >"$dir/rest.log" 2>&1 </dev/null &
	local pid=$! i
	for i in $(seq 1 100); do
		[ -s "$dir/rest.addr" ] && break
		if ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.1
	done
	if [ ! -s "$dir/rest.addr" ]; then
		echo "start-rest.sh: the REST catalog server did not start; its log:" >&2
		cat "$dir/rest.log" >&2
		kill "$pid" 2>/dev/null || true
		return 1
	fi
	echo "$pid" >"$dir/rest.pid"

	cat >"$dir/rest.env" <<EOT
export GEOCOMPACT_TEST_REST_URI=$(cat "$dir/rest.addr")
export GEOCOMPACT_TEST_REST_CREDENTIAL=geocompact:$secret
export GEOCOMPACT_REST_DIR=$dir
EOT
	chmod 600 "$dir/rest.env"
	_GC_REST_ENV="$dir/rest.env"
	echo "start-rest.sh: REST catalog server (pid $pid) on $(cat "$dir/rest.addr"), state in $dir" >&2
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
	# Sourced: export into the caller's shell.
	_GC_REST_ENV=""
	if _gc_rest_main "$@"; then
		# shellcheck disable=SC1090
		[ -z "$_GC_REST_ENV" ] || . "$_GC_REST_ENV"
	else
		return 1
	fi
else
	set -euo pipefail
	_GC_REST_ENV=""
	_gc_rest_main "$@"
	[ -z "$_GC_REST_ENV" ] || cat "$_GC_REST_ENV"
fi
