#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than
# package-lock.json. artillery pulls in a browser downloader that cannot
# reach its host here; the browser is never used, so its download is skipped.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
stamp=node_modules/.package-lock.json
if [ -f "$stamp" ] && [ ! package-lock.json -nt "$stamp" ]; then exit 0; fi
command -v node >/dev/null || { echo "chainperf: Node.js 20 or later is needed (https://nodejs.org)" >&2; exit 1; }
echo "chainperf: installing npm dependencies (first run; about a minute)..." >&2
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
echo "chainperf: npm dependencies installed" >&2
