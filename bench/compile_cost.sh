#!/usr/bin/env bash
# Compile cost of including tablio: how much a translation unit that includes the codec
# layer, and one that includes <tablio/tablio.hpp> and uses one holder and one PFR struct,
# add over an empty one at -O2, in CPU seconds (the fastest of several runs of each).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
runs=${RUNS:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/empty.cpp" <<'CPP'
int main() { return 0; }
CPP
cat > "$work/codec_layer.cpp" <<'CPP'
#include <tablio/codec/codec.hpp>
int main() { return 0; }
CPP
cat > "$work/full_use.cpp" <<'CPP'
#include <tablio/tablio.hpp>
struct sample { int id; std::string name; std::vector<float> values; };
int main() {
  auto bytes = tablio::encode<tablio::kaldi_binary>(sample{1, "a", {1.f}});
  auto back = tablio::decode<tablio::kaldi_binary, sample>(bytes);
  std::string archive;
  tablio::writer w = tablio::memory_writer(archive);
  tablio::holder<sample>::write(w, true, back);
  w.close();
  tablio::reader r = tablio::memory_reader(std::string_view(archive));
  tablio::holder<sample> h;
  h.read(r);
  return h.value().id;
}
CPP

# CPU seconds (user + system) of one compile; the fastest of RUNS, since a shared machine
# only ever adds time.
fastest_seconds() {
  local src=$1 best=""
  for _ in $(seq "$runs"); do
    local t
    t=$( { TIMEFORMAT='%3U %3S'; time "$cxx" -std=c++20 -O2 -I"$root/include" -c "$src" -o "$work/out.o"; } 2>&1 |
        awk '{ print $1 + $2 }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  echo "$best"
}

empty=$(fastest_seconds "$work/empty.cpp")
codec=$(fastest_seconds "$work/codec_layer.cpp")
full=$(fastest_seconds "$work/full_use.cpp")
printf 'empty TU:                                   %.2f s\n' "$empty"
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
printf 'codec layer included:                       %.2f s  (+%s s)\n' "$codec" "$(minus "$codec" "$empty")"
printf 'tablio.hpp + one holder + one PFR struct:   %.2f s  (+%s s)\n' "$full" "$(minus "$full" "$empty")"
