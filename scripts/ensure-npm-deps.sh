#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than
# package-lock.json. artillery pulls in a browser downloader that cannot
# reach its host here; the browser is never used, so its download is skipped.
# Two runs starting at once on a fresh clone wait for each other (flock):
# two npm installs into one node_modules corrupt it.
#
# A finished install is kept in chainperf's cache, keyed by package-lock.json,
# the Node.js version and the machine's architecture; another clone with the
# same key links it (a second or two) rather than unpacking about 700 MB of
# packages again with npm ci (about a minute). The files are hard links to
# the kept ones, as pnpm's store does it: nothing writes into an installed
# package's files (an npm ci replaces them). CHAINPERF_NPM_CACHE=no skips it.
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

# link_tree FROM TO: TO made of hard links to FROM's files; copied where they cannot be linked (another file system)
link_tree() {
  rm -rf "$2"
  cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2" && cp -a "$1" "$2"; }
}

cache_root="${CHAINPERF_CACHE:-$HOME/.cache/chainperf}/node_modules"
key=$( { cat package-lock.json; node --version; uname -m; } | sha256sum | cut -c1-16)
kept="$cache_root/$key"
if [ "${CHAINPERF_NPM_CACHE:-yes}" != no ] && [ -f "$kept/.complete" ]; then
  echo "chainperf: linking the npm dependencies installed before for this package-lock.json ($kept)" >&2
  rm -rf node_modules
  link_tree "$kept/node_modules" node_modules.partial
  mv node_modules.partial node_modules
  touch -h "$stamp" # newer than this clone's package-lock.json: the install is fresh
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
  if link_tree node_modules "$partial/node_modules" && touch "$partial/.complete"; then
    rm -rf "$kept" && mv "$partial" "$kept"
    ls -1dt "$cache_root"/*/ 2>/dev/null | tail -n +3 | xargs -r rm -rf
  else
    rm -rf "$partial"
    echo "chainperf: could not keep a copy of the npm dependencies in $cache_root (the next clone runs npm ci)" >&2
  fi
fi
