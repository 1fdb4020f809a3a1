#!/bin/bash
# A compiler launcher that times each compile: appends "wall user sys object"
# (seconds) to $TU_TIMES (default ./tu_times.log). bench/NOTES.md, "build
# time (issue 39)":
#   cmake -S . -B build-timed -DCMAKE_CXX_COMPILER_LAUNCHER=$PWD/bench/tu_timer.sh
#   TU_TIMES=$PWD/tu_times.log cmake --build build-timed -j 2
#   sort -k2 -rn tu_times.log | head -20
out=""
prev=""
for a in "$@"; do
  [ "$prev" = "-o" ] && out="$a"
  prev="$a"
done
times=$(mktemp)
TIMEFORMAT='%R %U %S'
# bash's own `time`: its report goes to $times, the compiler's stderr stays.
{ time "$@" 2>&3; } 3>&2 2>"$times"
rc=$?
echo "$(cat "$times") $out" >> "${TU_TIMES:-tu_times.log}"
rm -f "$times"
exit $rc
