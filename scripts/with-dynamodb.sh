#!/usr/bin/env bash
# with-dynamodb.sh SERVER CMD [ARGS...]
#
# Runs CMD with a DynamoDB-API server on loopback, so that timetable's
# DynamoDB suites run for real. SERVER is one of
#
#   dynalite        dynalite (npm), in memory, pinned by scripts/dynalite;
#   dynamodb-local  AWS's DynamoDB Local 1.25.1, the jar the npm package
#                   amplify-dynamodb-simulator ships, pinned by
#                   scripts/dynamodb-local, run in memory with Java.
#
# The script
#
#   1. installs the server with `npm ci` from its committed lock file into
#      .cache/SERVER (again only when the lock file changes);
#   2. starts it in memory on a free port of 127.0.0.1, listening there
#      only (DynamoDB Local through scripts/dynamodb-local/Loopback.java,
#      since the jar has no option for its address and would listen on
#      every interface);
#   3. waits until it answers a real DynamoDB ListTables request;
#   4. exports TIMETABLE_DYNAMODB_ENDPOINT and AWS_ENDPOINT_URL_DYNAMODB
#      (http://127.0.0.1:PORT), TIMETABLE_DYNAMODB_SERVER (SERVER, which
#      tells the tests what the server lacks: internal/dynamotest), and
#      dummy AWS credentials and region (DynamoDB Local keeps the tables of
#      each access key and region apart, so every client must use the same);
#   5. runs CMD and stops the server when the script exits, whether CMD
#      failed or not, and exits with CMD's status.
#
# DYNALITE_TABLE_MS (default 50) is how long dynalite keeps a table in the
# CREATING, UPDATING and DELETING states; dynalite's own default is 500.
set -euo pipefail

if [ $# -lt 2 ]; then
	echo "usage: $0 dynalite|dynamodb-local CMD [ARGS...]" >&2
	exit 2
fi
server="$1"
shift

root="$(cd "$(dirname "$0")/.." && pwd)"
src="$root/scripts/$server"
cache="$root/.cache/$server"
case "$server" in
dynalite | dynamodb-local) ;;
*)
	echo "with-dynamodb: unknown server $server: use dynalite or dynamodb-local" >&2
	exit 2
	;;
esac

# Install when missing or when the committed lock file differs from the one
# installed. Install scripts are not run: only the packages' files are used.
if [ ! -f "$cache/installed" ] || ! cmp -s "$src/package-lock.json" "$cache/package-lock.json"; then
	echo "with-dynamodb: installing $server into $cache" >&2
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	(cd "$cache" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
	touch "$cache/installed"
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

died() {
	echo "with-dynamodb: $server exited:" >&2
	cat "$workdir/out" "$workdir/err" >&2
	exit 1
}

port=""
case "$server" in
dynalite)
	ms="${DYNALITE_TABLE_MS:-50}"
	node "$src/start.js" "$cache" --createTableMs "$ms" --deleteTableMs "$ms" --updateTableMs "$ms" \
		>"$workdir/out" 2>"$workdir/err" &
	pid=$!
	for _ in $(seq 1 300); do
		port="$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$workdir/out")"
		[ -n "$port" ] && break
		kill -0 "$pid" 2>/dev/null || died
		sleep 0.1
	done
	;;
dynamodb-local)
	command -v java >/dev/null && command -v javac >/dev/null || {
		echo "with-dynamodb: DynamoDB Local needs a Java 17 JDK (apt-get install openjdk-17-jdk-headless)" >&2
		exit 1
	}
	# DynamoDB Local 1.25.1 has no option for its address: started as
	# `java -jar DynamoDBLocal.jar -port P` it listens on *:P, every
	# interface. Loopback.java builds the server from the same arguments
	# and sets its Jetty connector's host to 127.0.0.1 before it starts
	# (`ss -ltn` shows 127.0.0.1:P); it is compiled once into the cache.
	emulator="$cache/node_modules/amplify-dynamodb-simulator/emulator"
	if [ ! -f "$cache/loopback/Loopback.class" ] || [ "$src/Loopback.java" -nt "$cache/loopback/Loopback.class" ]; then
		javac -nowarn -cp "$emulator/DynamoDBLocal.jar" -d "$cache/loopback" "$src/Loopback.java" >&2
	fi
	# DynamoDB Local takes a port number, not 0: ask the kernel for a free
	# one and start there, trying again should another process take it
	# in between.
	for _ in 1 2 3; do
		port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
		(cd "$emulator" && exec java -Xmx1g -Djava.library.path=./DynamoDBLocal_lib \
			-cp "DynamoDBLocal.jar:$cache/loopback" Loopback \
			-inMemory -port "$port" -disableTelemetry) >"$workdir/out" 2>"$workdir/err" &
		pid=$!
		sleep 0.5
		kill -0 "$pid" 2>/dev/null && break
		pid=""
	done
	[ -n "$pid" ] || died
	;;
esac
if [ -z "$port" ]; then
	echo "with-dynamodb: $server did not start" >&2
	cat "$workdir/err" >&2
	exit 1
fi

endpoint="http://127.0.0.1:$port"
ready=""
for _ in $(seq 1 300); do
	if curl -fsS -o /dev/null -X POST "$endpoint/" \
		-H 'Content-Type: application/x-amz-json-1.0' \
		-H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
		-H 'X-Amz-Date: 20240101T000000Z' \
		-H 'Authorization: AWS4-HMAC-SHA256 Credential=timetable/20240101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00' \
		--data '{}' 2>/dev/null; then
		ready=1
		break
	fi
	kill -0 "$pid" 2>/dev/null || died
	sleep 0.1
done
if [ -z "$ready" ]; then
	echo "with-dynamodb: $server at $endpoint does not answer ListTables" >&2
	cat "$workdir/err" >&2
	exit 1
fi
echo "with-dynamodb: $server listening at $endpoint" >&2

export TIMETABLE_DYNAMODB_SERVER="$server"
export TIMETABLE_DYNAMODB_ENDPOINT="$endpoint"
export AWS_ENDPOINT_URL_DYNAMODB="$endpoint"
export AWS_ACCESS_KEY_ID=timetable
export AWS_SECRET_ACCESS_KEY=timetable
export AWS_REGION=us-east-1
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_PROFILE

status=0
"$@" || status=$?
exit "$status"
