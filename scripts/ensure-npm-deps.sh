#!/usr/bin/env bash
# Installs the npm dependencies when node_modules is missing or older than
# package-lock.json. artillery pulls in a browser downloader that cannot
# reach its host here; the browser is never used, so its download is skipped.
# npm ci's output goes to a log in chainperf's cache (logs/), named on the
# line that starts it, and is shown only when it fails (the log's last lines),
# like chainperf's other install steps (src/install/progress.js).
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

# "1 min 5 s", "2 min", "45 s" (as src/install/step-log.js says them)
duration() {
  if (($1 < 60)); then echo "$1 s"; elif (($1 % 60)); then echo "$(($1 / 60)) min $(($1 % 60)) s"; else echo "$(($1 / 60)) min"; fi
}

# quietly STEP TYPICAL_S WHAT COMMAND...: the command's whole output into the cache's logs/STEP-<date>-<ms>-<pid>.log (the
# newest five kept); one line when it starts (its usual time: the one it last took, in logs/STEP.seconds, else
# TYPICAL_S), one every 15 s (CHAINPERF_HEARTBEAT_S), one when it is done; when it fails, its output (the last 30
# lines of it when longer than 40) and the command's exit status. Ctrl-C or a TERM stops the command too.
quietly() {
  local step=$1 typical=$2 what=$3
  shift 3
  local logs="${CHAINPERF_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/chainperf}/logs"
  local usual=$typical from="typical on 2 cores" last
  if last=$(cat "$logs/$step.seconds" 2>/dev/null) && [[ $last =~ ^[0-9]+$ ]]; then
    usual=$last from="its last run on this machine"
  fi
  local log
  log="$logs/$step-$(date -u +%Y%m%d-%H%M%S-%3N)-$$.log"
  if ! { mkdir -p "$logs" && printf '# %s\n# %s\n# started %s\n' "$what" "$*" "$(date -u +%FT%TZ)" >"$log"; } 2>/dev/null; then
    echo "chainperf: $what: its output follows ($logs cannot be written)" >&2
    "$@" >&2
    return
  fi
  find "$logs" -maxdepth 1 -name "$step-[0-9]*.log" | sort | head -n -5 | xargs -r rm -f
  echo "chainperf: $what: usually about $(duration "$usual") ($from); its output goes to $log" >&2
  local start beat=${CHAINPERF_HEARTBEAT_S:-15} status=0 next
  start=$(date +%s)
  next=$((start + beat))
  # in a process group of its own (setsid execs it: $! is its group), stopped whole with its children
  setsid "$@" >>"$log" 2>&1 &
  local pid=$!
  trap 'kill -- -"$pid" 2>/dev/null; wait "$pid" || true; echo "# interrupted" >>"$log"; exit 130' INT
  trap 'kill -- -"$pid" 2>/dev/null; wait "$pid" || true; echo "# stopped (TERM)" >>"$log"; exit 143' TERM
  while kill -0 "$pid" 2>/dev/null; do
    sleep 0.2
    if (($(date +%s) >= next)) && kill -0 "$pid" 2>/dev/null; then
      last=$(grep . "$log" | tail -n 1 | cut -c1-100)
      local so_far=$(($(date +%s) - start)) of="of about"
      ((so_far <= usual)) || of="longer than the usual"
      echo "chainperf: $what: $(duration $so_far) so far, $of $(duration "$usual"); last output: $last" >&2
      next=$((next + beat))
    fi
  done
  wait "$pid" || status=$?
  trap - INT TERM
  local took=$(($(date +%s) - start))
  echo "# exited with status $status after $(duration $took)" >>"$log"
  if ((status != 0)); then
    local lines which="its output"
    lines=$(($(grep -c . "$log") - 4)) # the command's, without the log's first three lines and its last
    ((lines <= 40)) || which="its last 30 of $lines lines"
    echo "chainperf: $what failed: $1 exited with status $status; its whole output is in $log; $which:" >&2
    grep . "$log" | sed '1,3d;$d' | tail -n "$( ((lines <= 40)) && echo 40 || echo 30)" | sed 's/^/  /' >&2
    return "$status"
  fi
  echo "$took" >"$logs/$step.seconds.$$" && mv "$logs/$step.seconds.$$" "$logs/$step.seconds"
  echo "chainperf: $what: done in $(duration $took)" >&2
}

export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
quietly npm-ci 30 "installing the npm dependencies (npm ci, first run)" npm ci --no-audit --no-fund --loglevel=http
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
