#!/usr/bin/env bash
# install.sh installs DuckDB's Node API, pinned by scripts/duckdb's lock
# file, with npm into .cache/duckdb (again only when the lock file
# changes), and prints that folder. Concurrent runs (the two test runs of
# scripts/test.sh, the test binaries of several packages) take turns on a
# lock. Install scripts are not run: the package ships prebuilt bindings.
# It is `npm install`, not `npm ci`: npm writes lock files without the
# bindings of other platforms than its own, which `npm ci` then refuses;
# `npm install` takes the pinned versions from the lock file all the same.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/scripts/duckdb"
cache="$root/.cache/duckdb"
mkdir -p "$root/.cache"
exec 9>"$root/.cache/duckdb.lock"
flock 9
if [ ! -f "$cache/installed" ] || ! cmp -s "$src/package-lock.json" "$cache/installed"; then
	echo "duckdb: installing @duckdb/node-api into $cache" >&2
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	(cd "$cache" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
	cp "$src/package-lock.json" "$cache/installed"
fi
echo "$cache"
