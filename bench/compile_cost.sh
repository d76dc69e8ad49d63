#!/usr/bin/env bash
# Compile cost of using tablio: what each translation unit of bench/compile_units adds over an
# empty one, in CPU seconds (user + system) at -O2, header-only (but one row), with the zlib
# and lmdb components on. Seconds depend on the machine: bench/compile_gate.py checks the
# deterministic proxies (preprocessed lines, object size) in CI. Each figure is the fastest
# of RUNS compiles (default 9): a shared machine only ever adds time, and its slow spells last
# seconds. Prints each figure beside its budget and exits non-zero when one is over it. With
# KALDI_ROOT set (a built Kaldi tree), Kaldi's own featbin/copy-feats.cc is the reference row
# (-std=c++17 -O2 and KALDI_CXXFLAGS, e.g. kaldi.mk's -DHAVE_OPENBLAS ... -I.../openfst/include).
#   bench/compile_cost.sh            CXX=clang++-14 RUNS=15 bench/compile_cost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
runs=${RUNS:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

units="$root/bench/compile_units"  # the translation units, shared with bench/compile_gate.py

# CPU seconds (user + system) of one compile; the fastest of RUNS.
fastest_seconds() {
  local src=$1 best="" flags=("${@:2}")
  for _ in $(seq "$runs"); do
    local t
    t=$( { TIMEFORMAT='%3U %3S'; time "$cxx" -std=c++20 -O2 -I"$root/include" -DTABLIO_WITH_ZLIB \
             -DTABLIO_WITH_LMDB "${flags[@]}" -c "$src" -o "$work/out.o" 2>"$work/errors"; } 2>&1) || {
      echo "compile_cost.sh: $(basename "$src") does not compile:" >&2
      cat "$work/errors" >&2
      exit 2
    }
    t=$(echo "$t" | awk '{ print $1 + $2 }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  echo "$best"
}

empty=$(fastest_seconds "$units/empty.cpp")
printf '%-70s %6.2f s\n' "empty TU" "$empty"
over=0
report() {
  local label=$1 src=$2 budget=$3 t added verdict
  t=$(fastest_seconds "$units/$src" "${@:4}")
  added=$(awk -v a="$t" -v b="$empty" 'BEGIN { printf "%.2f", a - b }')
  verdict=$(awk -v a="$added" -v b="$budget" 'BEGIN { print (a <= b) ? "within" : "OVER" }')
  [ "$verdict" = within ] || over=1
  printf '%-70s +%5.2f s  (budget %.1f s: %s)\n' "$label" "$added" "$budget" "$verdict"
}
report "<string> <vector> <map> <optional> <span> <tuple> <charconv> <stdexcept>" standard_headers.cpp 0.5
report "codec layer included" codec_layer.cpp 0.3
report "a file opened by name and copied (the stream layer every table compiles)" open_by_name.cpp 2.5
report "writer + sequential + random access over ark_framing, one PFR struct" fixed_framing.cpp 1.5
report "the same three over specifiers (any_framing, all formats)" any_framing.cpp 4.0
report "the same, TABLIO_SEPARATE_COMPILATION (the struct's tables compiled here)" any_framing.cpp 2.5 \
  -DTABLIO_SEPARATE_COMPILATION
report "Kaldi facade: copy-feats (matrix reader and writer)" kaldi_copy.cpp 3.0
report "the same, TABLIO_SEPARATE_COMPILATION (src/tablio.cpp compiled apart)" kaldi_copy.cpp 1.8 \
  -DTABLIO_SEPARATE_COMPILATION
report "<tablio/tablio.hpp> included, nothing used" umbrella.cpp 1.2
report "the same, TABLIO_SEPARATE_COMPILATION (the extern template lists)" umbrella.cpp 2.0 \
  -DTABLIO_SEPARATE_COMPILATION
report "<tablio/codec/protobuf.hpp> included, nothing used" protobuf_included.cpp 0.8
report "a struct encoded and decoded with tablio::protobuf" protobuf_used.cpp 2.0
if [ -n "${KALDI_ROOT:-}" ]; then
  best=""
  for _ in $(seq "$runs"); do
    t=$( { TIMEFORMAT='%3U %3S'; time g++ -std=c++17 -O2 -I"$KALDI_ROOT/src" ${KALDI_CXXFLAGS:-} \
             -c "$KALDI_ROOT/src/featbin/copy-feats.cc" -o "$work/kaldi.o"; } 2>&1 | tail -1 | awk '{ print $1 + $2 }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  printf '%-70s %6.2f s  (the reference)\n' "Kaldi's own featbin/copy-feats.cc" "$best"
fi
exit $over
