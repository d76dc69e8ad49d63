#!/usr/bin/env bash
# Compile cost of including tablio: how much a translation unit that includes the codec
# layer, and one that includes <tablio/tablio.hpp> and uses one holder and one PFR struct,
# add over an empty one at -O2. Prints the median of several runs of each.
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

median_seconds() {
  local src=$1 times=()
  for _ in $(seq "$runs"); do
    local start end
    start=$(date +%s.%N)
    "$cxx" -std=c++20 -O2 -I"$root/include" -c "$src" -o "$work/out.o"
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')")
  done
  printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((runs + 1) / 2))p"
}

empty=$(median_seconds "$work/empty.cpp")
codec=$(median_seconds "$work/codec_layer.cpp")
full=$(median_seconds "$work/full_use.cpp")
printf 'empty TU:                                   %.2f s\n' "$empty"
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }
printf 'codec layer included:                       %.2f s  (+%s s)\n' "$codec" "$(minus "$codec" "$empty")"
printf 'tablio.hpp + one holder + one PFR struct:   %.2f s  (+%s s)\n' "$full" "$(minus "$full" "$empty")"
