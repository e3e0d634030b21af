#!/usr/bin/env bash
# What the tests need beyond Node and npm (`npm test` and .ci/run run this first): the browser test
# (test/packaging.test.ts) drives Debian's Chromium, the read replica test
# (packages/server/test/replicas.test.ts) a PostgreSQL 15 primary and standby (pg_basebackup: the
# embedded PostgreSQL has none), and the PgBouncer test (packages/server/test/pgbouncer.test.ts)
# Debian's pgbouncer, the documentation's examples (test/docs-examples.test.ts) call curl and jq, and
# the completion test (packages/cli/test/exit-codes.test.ts) loads its scripts in bash and fish.
# All present: nothing. Missing: installed with apt-get when run as root (no cluster of its own is
# created), else one line naming them and exit 1.
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v curl >/dev/null || missing+=(curl)
command -v jq >/dev/null || missing+=(jq)
command -v fish >/dev/null || missing+=(fish)
[ -x /usr/lib/postgresql/15/bin/pg_basebackup ] || missing+=(postgresql-15)
[ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$EUID" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "npm test needs Debian packages: ${missing[*]}; install them (apt-get install ${missing[*]}) or run as root" >&2
  exit 1
fi
mkdir -p /etc/postgresql-common
echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.conf
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
# The package may start its own service (localhost:6432, no database): the test starts one of its
# own on a free port, so that one is stopped (by its pid file) and not started at boot.
if [[ " ${missing[*]} " == *" pgbouncer "* ]]; then
  /etc/init.d/pgbouncer stop >/dev/null 2>&1 || true
  update-rc.d pgbouncer disable >/dev/null 2>&1 || true
fi
