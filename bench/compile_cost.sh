#!/usr/bin/env bash
# Compile cost of using tablio: what each translation unit below adds over an empty one, in
# CPU seconds (user + system) at -O2, header-only, with the zlib and lmdb components on. Each
# figure is the fastest of RUNS compiles (default 9): a shared machine only ever adds time,
# and its slow spells last seconds. Prints each figure beside its budget and exits non-zero
# when one is over it.
#   bench/compile_cost.sh            CXX=clang++-14 RUNS=15 bench/compile_cost.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
runs=${RUNS:-9}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/empty.cpp" <<'CPP'
int main() { return 0; }
CPP
cat >"$work/codec_layer.cpp" <<'CPP'
#include <tablio/codec/codec.hpp>
int main() { return 0; }
CPP
# The three table classes over one fixed framing, a Kaldi archive, and a user's struct.
cat >"$work/fixed_framing.cpp" <<'CPP'
#include <tablio/framing/ark.hpp>
#include <tablio/holder/holder.hpp>
#include <tablio/table/random_access_reader.hpp>
#include <tablio/table/sequential_reader.hpp>
#include <tablio/table/table_writer.hpp>
struct sample { int id; std::string name; std::vector<float> values; };
int main(int argc, char** argv) {
  using entry = tablio::holder<sample>;
  tablio::table_writer<entry, tablio::ark_framing> out(argv[1]);
  out.write("a", {1, "a", {1.f}});
  out.close();
  int sum = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<entry, tablio::ark_framing>(argv[1])) sum += value.id;
  tablio::random_access_table_reader<entry, tablio::ark_framing> by_key(argv[1]);
  return argc + sum + by_key.at("a").id;
}
CPP
# The same three opened from specifiers, so that every format may be named at run time.
cat >"$work/any_framing.cpp" <<'CPP'
#include <tablio/tablio.hpp>
struct sample { int id; std::string name; std::vector<float> values; };
int main(int argc, char** argv) {
  using entry = tablio::holder<sample>;
  tablio::table_writer<entry> out(argv[1]);
  out.write("a", {1, "a", {1.f}});
  out.close();
  int sum = 0;
  for (auto& [key, value] : tablio::sequential_table_reader<entry>(argv[2])) sum += value.id;
  tablio::random_access_table_reader<entry> by_key(argv[2]);
  return argc + sum + by_key.at("a").id;
}
CPP
# Kaldi's copy-feats, as Kaldi code compiled against the facade.
cat >"$work/kaldi_copy.cpp" <<'CPP'
#include <tablio/kaldi.hpp>
namespace kaldi = tablio::kaldi;
int main(int argc, char** argv) {
  using namespace kaldi;
  if (argc != 3) return 1;
  SequentialBaseFloatMatrixReader reader(argv[1]);
  BaseFloatMatrixWriter writer(argv[2]);
  for (; !reader.Done(); reader.Next()) writer.Write(reader.Key(), reader.Value());
  return writer.Close() ? 0 : 1;
}
CPP
# The protobuf codec, apart from tablio.hpp: included alone, and a struct through it both ways.
cat >"$work/protobuf_included.cpp" <<'CPP'
#include <tablio/codec/protobuf.hpp>
int main() { return 0; }
CPP
cat >"$work/protobuf_used.cpp" <<'CPP'
#include <tablio/codec/protobuf.hpp>
struct sample { int id; std::string name; std::vector<float> values; std::optional<std::int64_t> extra; };
int main(int argc, char**) {
  auto bytes = tablio::encode<tablio::protobuf>(sample{argc, "a", {1.f}, 7});
  return tablio::decode<tablio::protobuf, sample>(bytes.view()).id;
}
CPP
cat >"$work/umbrella.cpp" <<'CPP'
#include <tablio/tablio.hpp>
int main() { return 0; }
CPP

# CPU seconds (user + system) of one compile; the fastest of RUNS.
fastest_seconds() {
  local src=$1 best=""
  for _ in $(seq "$runs"); do
    local t
    t=$( { TIMEFORMAT='%3U %3S'; time "$cxx" -std=c++20 -O2 -I"$root/include" -DTABLIO_WITH_ZLIB \
             -DTABLIO_WITH_LMDB -c "$src" -o "$work/out.o" 2>"$work/errors"; } 2>&1) || {
      echo "compile_cost.sh: $(basename "$src") does not compile:" >&2
      cat "$work/errors" >&2
      exit 2
    }
    t=$(echo "$t" | awk '{ print $1 + $2 }')
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
  done
  echo "$best"
}

empty=$(fastest_seconds "$work/empty.cpp")
printf '%-70s %6.2f s\n' "empty TU" "$empty"
over=0
report() {
  local label=$1 src=$2 budget=$3 t added verdict
  t=$(fastest_seconds "$work/$src")
  added=$(awk -v a="$t" -v b="$empty" 'BEGIN { printf "%.2f", a - b }')
  verdict=$(awk -v a="$added" -v b="$budget" 'BEGIN { print (a <= b) ? "within" : "OVER" }')
  [ "$verdict" = within ] || over=1
  printf '%-70s +%5.2f s  (budget %.1f s: %s)\n' "$label" "$added" "$budget" "$verdict"
}
report "codec layer included" codec_layer.cpp 0.3
report "writer + sequential + random access over ark_framing, one PFR struct" fixed_framing.cpp 1.5
report "the same three over specifiers (any_framing, all formats)" any_framing.cpp 4.0
report "Kaldi facade: copy-feats (matrix reader and writer)" kaldi_copy.cpp 3.0
report "<tablio/tablio.hpp> included, nothing used" umbrella.cpp 1.2
report "<tablio/codec/protobuf.hpp> included, nothing used" protobuf_included.cpp 0.8
report "a struct encoded and decoded with tablio::protobuf" protobuf_used.cpp 2.0
exit $over
