#!/usr/bin/env bash
# install.sh makes ready what the web console's end-to-end test drives:
# Debian's chromium (apt-get, when /usr/bin/chromium is missing; never a
# browser download) and playwright-core, pinned by this folder's lock
# file, installed with npm into .cache/browser (again only when the lock
# file changes). It prints that folder. Concurrent runs take turns on a
# lock.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
src="$root/scripts/browser"
cache="$root/.cache/browser"
mkdir -p "$root/.cache"
exec 9>"$root/.cache/browser.lock"
flock 9
if [ ! -x /usr/bin/chromium ]; then
	echo "browser: installing Debian's chromium" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y chromium >&2 || { apt-get update >&2 && apt-get install -y chromium >&2; }
fi
if [ ! -f "$cache/installed" ] || ! cmp -s "$src/package-lock.json" "$cache/installed"; then
	echo "browser: installing playwright-core into $cache" >&2
	rm -rf "$cache"
	mkdir -p "$cache"
	cp "$src/package.json" "$src/package-lock.json" "$cache/"
	(cd "$cache" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2)
	cp "$src/package-lock.json" "$cache/installed"
fi
echo "$cache"
