#!/usr/bin/env bash
# chainperf: ./run.sh scenarios/<name>.env   (see README.md)
# Installs the npm dependencies on first use, then hands over to Node.
# Only the report folder is printed on standard output (last line).
set -Eeuo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/scripts/ensure-npm-deps.sh" >&2
exec node "$here/src/cli.js" "$@"
