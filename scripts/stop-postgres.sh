#!/usr/bin/env bash
# stop-postgres.sh stops the throwaway server scripts/start-postgres.sh
# started and removes its directory. It does nothing when that server is not
# running. The same GEOCOMPACT_PG_PORT / GEOCOMPACT_PG_DIR apply.
set -euo pipefail

port="${GEOCOMPACT_PG_PORT:-55432}"
dir="${GEOCOMPACT_PG_DIR:-/tmp/geocompact-pg-$port}"

if [[ ! -f "$dir/data/PG_VERSION" ]]; then
	echo "stop-postgres: no cluster in $dir" >&2
	exit 0
fi
bin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)"
if [[ -f "$dir/data/postmaster.pid" ]]; then
	if [[ "$(id -u)" == 0 ]]; then
		runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
	else
		"$bin/pg_ctl" -D "$dir/data" -m fast -w stop >&2
	fi
fi
rm -rf "$dir"
echo "stop-postgres: stopped and removed $dir" >&2
