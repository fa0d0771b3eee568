#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than
# package-lock.json. artillery pulls in a browser downloader that cannot
# reach its host here; the browser is never used, so its download is skipped.
# Two runs starting at once on a fresh clone wait for each other (flock):
# two npm installs into one node_modules corrupt it.
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
echo "chainperf: installing npm dependencies (first run; about a minute)..." >&2
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
echo "chainperf: npm dependencies installed" >&2
