#!/usr/bin/env bash
# Prints the directory of the shared test data (Spider, BIRD, Chinook), for
# TEXT2SQL_SHARED_DATA, or nothing when there is none. The rule, first match:
#  1. $TEXT2SQL_SHARED_DATA when set;
#  2. a shared/data directory beside the checkout or one of its parents (the
#     walk internal/shareddata does: /work/main finds /work/shared/data);
#  3. the same walk from the repository this clone came from, when its
#     origin is a local path (a CI clone in /tmp of /work/main, or of a clone
#     of it, still finds /work/shared/data).
# Usage: bash .ci/shared-data.sh   (from anywhere inside the checkout)
set -euo pipefail

if [ -n "${TEXT2SQL_SHARED_DATA:-}" ]; then echo "$TEXT2SQL_SHARED_DATA"; exit 0; fi

# walk DIR: prints the first DIR/shared/data, DIR/../shared/data, … found.
walk() {
  local d="$1"
  while :; do
    if [ -d "$d/shared/data" ]; then echo "$d/shared/data"; return 0; fi
    [ "$d" = / ] && return 1
    d="$(dirname "$d")"
  done
}

repo="$(git rev-parse --show-toplevel)"
walk "$repo" && exit 0

# Follow local origins (a clone of a clone) a few steps back.
for _ in 1 2 3 4; do
  origin="$(git -C "$repo" remote get-url origin 2>/dev/null)" || exit 0
  origin="${origin#file://}"
  case "$origin" in /*) ;; *) exit 0 ;; esac   # not a local path
  [ -d "$origin" ] || exit 0
  repo="$(cd "$origin" && git rev-parse --show-toplevel 2>/dev/null || echo "$origin")"
  walk "$repo" && exit 0
done
exit 0
