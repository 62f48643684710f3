#!/bin/sh
# The test cluster's PostgreSQL image's entrypoint: the part of the official image's interface that the install
# tests use. On first start (no PG_VERSION in PGDATA): the superuser `postgres` with POSTGRES_PASSWORD, the
# database POSTGRES_DB, then every /docker-entrypoint-initdb.d/*.sql run in it (one statement per line), in
# single-user mode before the server listens. Then PostgreSQL on every address, password (SCRAM) auth.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_DB:=postgres}"

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password_file="$(mktemp)"
  printf '%s' "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" >"$password_file"
  initdb --pgdata="$PGDATA" --username=postgres --pwfile="$password_file" --auth-local=trust \
    --auth-host=scram-sha-256 --encoding=UTF8 --locale=C >/dev/null
  rm -f "$password_file"
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\"" | postgres --single -D "$PGDATA" postgres >/dev/null
  fi
  for script in /docker-entrypoint-initdb.d/*.sql; do
    [ -e "$script" ] || continue
    echo "running $script"
    postgres --single -D "$PGDATA" "$POSTGRES_DB" <"$script" >/dev/null
  done
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
