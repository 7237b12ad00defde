#!/usr/bin/env bash
# with-dynalite.sh CMD [ARGS...]
#
# Runs CMD with a DynamoDB-API server on loopback, so that timetable's
# DynamoDB suites run for real:
#
#   1. installs dynalite, pinned by scripts/dynalite/package-lock.json, with
#      `npm ci` into .cache/dynalite (again only when the lock file changes);
#   2. starts it in memory on a free 127.0.0.1 port the kernel picks;
#   3. waits until it answers a real DynamoDB ListTables request;
#   4. exports TIMETABLE_DYNAMODB_ENDPOINT and AWS_ENDPOINT_URL_DYNAMODB
#      (http://127.0.0.1:PORT) and dummy AWS credentials and region;
#   5. runs CMD and stops dynalite when the script exits, whether CMD
#      failed or not, and exits with CMD's status.
#
# When TIMETABLE_DYNAMODB_ENDPOINT is already set (DynamoDB Local, another
# dynalite), the script runs CMD against it and starts nothing.
#
# DYNALITE_TABLE_MS (default 50) is how long dynalite keeps a table in the
# CREATING, UPDATING and DELETING states; dynalite's own default is 500.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 CMD [ARGS...]" >&2
	exit 2
fi

if [ -n "${TIMETABLE_DYNAMODB_ENDPOINT:-}" ]; then
	export AWS_ENDPOINT_URL_DYNAMODB="${AWS_ENDPOINT_URL_DYNAMODB:-$TIMETABLE_DYNAMODB_ENDPOINT}"
	exec "$@"
fi

root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/dynalite"
cache="$root/.cache/dynalite"

# Install when missing or when the committed lock file differs from the one
# installed.
if [ ! -d "$cache/node_modules/dynalite" ] || ! cmp -s "$src/package-lock.json" "$cache/package-lock.json"; then
	echo "with-dynalite: installing dynalite into $cache" >&2
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

workdir="$(mktemp -d)"
pid=""
stop() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$workdir"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ms="${DYNALITE_TABLE_MS:-50}"
node "$src/start.js" "$cache" --createTableMs "$ms" --deleteTableMs "$ms" --updateTableMs "$ms" \
	>"$workdir/out" 2>"$workdir/err" &
pid=$!

# Wait for the port line, then for a real answer to ListTables.
port=""
for _ in $(seq 1 300); do
	port="$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$workdir/out")"
	[ -n "$port" ] && break
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "with-dynalite: dynalite exited:" >&2
		cat "$workdir/err" >&2
		exit 1
	fi
	sleep 0.1
done
if [ -z "$port" ]; then
	echo "with-dynalite: dynalite did not start" >&2
	cat "$workdir/err" >&2
	exit 1
fi

endpoint="http://127.0.0.1:$port"
ready=""
for _ in $(seq 1 100); do
	if curl -fsS -o /dev/null -X POST "$endpoint/" \
		-H 'Content-Type: application/x-amz-json-1.0' \
		-H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
		-H 'X-Amz-Date: 20240101T000000Z' \
		-H 'Authorization: AWS4-HMAC-SHA256 Credential=dynalite/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00' \
		--data '{}' 2>/dev/null; then
		ready=1
		break
	fi
	sleep 0.1
done
if [ -z "$ready" ]; then
	echo "with-dynalite: dynalite at $endpoint does not answer ListTables" >&2
	cat "$workdir/err" >&2
	exit 1
fi
echo "with-dynalite: dynalite listening at $endpoint" >&2

export TIMETABLE_DYNAMODB_ENDPOINT="$endpoint"
export AWS_ENDPOINT_URL_DYNAMODB="$endpoint"
export AWS_ACCESS_KEY_ID=dynalite
export AWS_SECRET_ACCESS_KEY=dynalite
export AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE

status=0
"$@" || status=$?
exit "$status"
