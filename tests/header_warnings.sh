#!/usr/bin/env bash
# Users include tablio with -I (pkg-config, a vendored copy), so its headers' warnings are
# theirs: compiles SOURCES with the warnings a strict build turns on and fails on any warning
# located in tablio's headers (the sources' own warnings are not this check's business).
#   header_warnings.sh CXX INCLUDE_DIR [FLAGS...] -- SOURCES...
set -euo pipefail
cxx=$1 include=$2
shift 2
flags=()
while [ "$1" != "--" ]; do flags+=("$1"); shift; done
shift
strict=(-std=c++20 -fsyntax-only -Wall -Wextra -Wpedantic -Wshadow -Wconversion)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
for source in "$@"; do
  "$cxx" "${strict[@]}" "-I$include" "${flags[@]}" "$source" >"$log" 2>&1 || status=1
  if grep -q "^$include/.*warning:" "$log"; then
    echo "== $source: warnings in tablio's headers with $cxx"
    grep -A3 "^$include/.*warning:" "$log"
    status=1
  elif [ $status -ne 0 ]; then
    echo "== $source does not compile with $cxx"
    cat "$log"
  fi
done
exit $status
