#!/usr/bin/env bash
# start-postgres.sh starts a throwaway PostgreSQL server for geocompact's
# tests: a fresh cluster in a scratch directory, listening on 127.0.0.1 only,
# with a database and user named geocompact. It installs PostgreSQL from the
# Debian packages when no server binaries are found (this needs root).
#
# Usage:
#   eval "$(scripts/start-postgres.sh)"     # exports GEOCOMPACT_TEST_POSTGRES_URI
#   go test ./...
#   scripts/stop-postgres.sh                # stops it and removes its directory
#
# It is idempotent: when the server is already up it only makes sure the
# database and user exist and prints the URI again. Progress goes to stderr;
# stdout carries only the export line.
#
# Environment:
#   GEOCOMPACT_PG_PORT  port to listen on (default 55432)
#   GEOCOMPACT_PG_DIR   cluster directory (default /tmp/geocompact-pg-$PORT)
#
# The cluster trusts nobody on TCP without a password, runs with fsync off
# (its data is disposable) and is not started at boot.
set -euo pipefail

port="${GEOCOMPACT_PG_PORT:-55432}"
dir="${GEOCOMPACT_PG_DIR:-/tmp/geocompact-pg-$port}"
db=geocompact
user=geocompact
password=geocompact
uri="postgres://$user:$password@127.0.0.1:$port/$db?sslmode=disable"

log() { echo "start-postgres: $*" >&2; }

find_bin() {
	local d
	d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
	if [[ -n "$d" && -x "$d/postgres" && -x "$d/initdb" ]]; then
		echo "$d"
	fi
}

bin="$(find_bin)"
if [[ -z "$bin" ]]; then
	if [[ "$(id -u)" != 0 ]]; then
		log "PostgreSQL is not installed and installing it needs root"
		exit 1
	fi
	log "installing PostgreSQL from the Debian packages"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# policy-rc.d keeps the package from starting its default cluster.
	had_policy=0
	[[ -e /usr/sbin/policy-rc.d ]] && had_policy=1
	if [[ $had_policy == 0 ]]; then
		printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
		chmod +x /usr/sbin/policy-rc.d
	fi
	apt-get install -y -qq --no-install-recommends postgresql >&2
	[[ $had_policy == 0 ]] && rm -f /usr/sbin/policy-rc.d
	bin="$(find_bin)"
	if [[ -z "$bin" ]]; then
		log "PostgreSQL server binaries not found under /usr/lib/postgresql after installing"
		exit 1
	fi
fi

# as_owner runs a command as the cluster's owner: postgres refuses to run as
# root, so root hands over to the postgres user.
as_owner() {
	if [[ "$(id -u)" == 0 ]]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

sock="$dir/socket"
superuser() { as_owner "$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$sock" -p "$port" -U postgres -d postgres "$@"; }

if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
	if [[ ! -f "$dir/data/PG_VERSION" ]]; then
		log "initialising a cluster in $dir"
		rm -rf "$dir"
		mkdir -p "$dir/data" "$sock"
		[[ "$(id -u)" == 0 ]] && chown -R postgres: "$dir"
		chmod 700 "$dir/data"
		as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
			--encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
			as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth-local=trust --auth-host=scram-sha-256 \
				--encoding=UTF8 --no-locale >"$dir/initdb.log" 2>&1 || {
			log "initdb failed:"
			cat "$dir/initdb.log" >&2
			exit 1
		}
	fi
	log "starting PostgreSQL ($bin) on 127.0.0.1:$port"
	if ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
		-o "-c listen_addresses=127.0.0.1 -p $port -k $sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
		start >&2; then
		log "the server did not start; its log:"
		tail -n 50 "$dir/server.log" >&2 || true
		exit 1
	fi
fi

for _ in $(seq 1 60); do
	"$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
	sleep 0.5
done
if ! "$bin/pg_isready" -q -h 127.0.0.1 -p "$port"; then
	log "the server on 127.0.0.1:$port is not ready after 30s"
	exit 1
fi
if [[ ! -S "$sock/.s.PGSQL.$port" ]]; then
	log "something else is listening on 127.0.0.1:$port (no socket in $sock); choose another GEOCOMPACT_PG_PORT"
	exit 1
fi

superuser <<SQL
DO \$\$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$user') THEN
		CREATE ROLE $user LOGIN PASSWORD '$password';
	END IF;
END
\$\$;
SQL
if [[ "$(superuser -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]]; then
	superuser -c "CREATE DATABASE $db OWNER $user"
fi

log "ready: $uri"
echo "export GEOCOMPACT_TEST_POSTGRES_URI='$uri'"
