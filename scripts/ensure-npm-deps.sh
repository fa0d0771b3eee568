#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than
# package-lock.json. artillery pulls in a browser downloader that cannot
# reach its host here; the browser is never used, so its download is skipped.
# Two runs starting at once on a fresh clone wait for each other (flock):
# two npm installs into one node_modules corrupt it.
#
# A finished install is kept in chainperf's cache, keyed by package-lock.json,
# the Node.js version and the machine's architecture; another clone with the
# same key copies it (seconds) rather than unpacking about 700 MB of packages
# again with npm ci (about a minute). CHAINPERF_NPM_CACHE=no skips the copy.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stamp=node_modules/.package-lock.json
fresh() { [ -f "$stamp" ] && [ ! package-lock.json -nt "$stamp" ]; }
if fresh; then exit 0; fi
command -v node >/dev/null || { echo "chainperf: Node.js 20 or later is needed (https://nodejs.org)" >&2; exit 1; }
exec 9>.npm-install.lock
if ! flock -n 9; then
  echo "chainperf: another chainperf is installing the npm dependencies; waiting for it..." >&2
  flock 9
fi
if fresh; then exit 0; fi

cache_root="${CHAINPERF_CACHE:-$HOME/.cache/chainperf}/node_modules"
key=$( { cat package-lock.json; node --version; uname -m; } | sha256sum | cut -c1-16)
kept="$cache_root/$key"
if [ "${CHAINPERF_NPM_CACHE:-yes}" != no ] && [ -f "$kept/.complete" ]; then
  echo "chainperf: copying the npm dependencies installed before for this package-lock.json ($kept)..." >&2
  rm -rf node_modules node_modules.partial
  cp -a "$kept/node_modules" node_modules.partial
  mv node_modules.partial node_modules
  touch "$stamp" # newer than this clone's package-lock.json: the copy is fresh
  echo "chainperf: npm dependencies copied" >&2
  exit 0
fi

echo "chainperf: installing npm dependencies (first run; about a minute)..." >&2
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
echo "chainperf: npm dependencies installed" >&2
if [ "${CHAINPERF_NPM_CACHE:-yes}" != no ]; then
  # kept whole or not at all (.complete written last); only the newest two keys stay
  mkdir -p "$cache_root"
  partial="$cache_root/.$key.$$"
  rm -rf "$partial" && mkdir -p "$partial"
  if cp -a node_modules "$partial/node_modules" && touch "$partial/.complete"; then
    rm -rf "$kept" && mv "$partial" "$kept"
    ls -1dt "$cache_root"/*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
  else
    rm -rf "$partial"
    echo "chainperf: could not keep a copy of the npm dependencies in $cache_root (the next clone runs npm ci)" >&2
  fi
fi
