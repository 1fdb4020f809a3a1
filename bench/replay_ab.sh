#!/bin/bash
# Replays LOG with each BINARY in turn, REPS rounds, into a scratch dir, and
# prints events/s, wall, user and system seconds, peak resident memory and
# the digest's start.
# Running the builds in turn is what makes a comparison fair on a shared
# machine. Usage: bench/replay_ab.sh LOG REPS BINARY...
set -euo pipefail
log=$1 reps=$2
shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
events=$(grep -c '' "$log")
for _ in $(seq "$reps"); do
  for bin in "$@"; do
    rm -rf "$scratch/into"
    /usr/bin/time -f "%e %U %S %M" -o "$scratch/time" "$bin" replay --from "$log" --into "$scratch/into" \
      > "$scratch/out" 2>&1 || { cat "$scratch/out"; exit 1; }
    read -r wall user sys rss_kb < "$scratch/time"
    digest=$(grep -o 'digest [0-9a-f]*' "$scratch/out" | cut -c8-19)
    awk -v b="$bin" -v n="$events" -v w="$wall" -v u="$user" -v s="$sys" -v m="$rss_kb" -v d="$digest" \
      'BEGIN { printf "%-32s %8.0f events/s  wall %.2f  user %.2f  sys %.2f  rss %4.0f MB  %s\n", b, n / w, w, u, s, m / 1024, d }'
  done
done
