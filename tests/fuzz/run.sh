#!/usr/bin/env bash
# Builds the fuzz targets with clang and runs each for SECONDS (default 60), two at a time,
# seeded from tests/data (make_seeds.py). Each target first replays its checked-in findings
# in tests/fuzz/regressions/TARGET. A new finding leaves its input in build/fuzz/findings and
# fails the run.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build="$root/build/fuzz"
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE= \
  -DTABLIO_BUILD_TESTS=OFF -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
rm -rf "$build/seeds"
/usr/bin/python3 "$root/tests/fuzz/make_seeds.py" "$root/tests/data" "$build/seeds"
mkdir -p "$build/findings"

run_one() {
  local target=$1 binary="$build/tests/fuzz/$1" log="$build/$1.log"
  if [[ ! -x $binary ]]; then echo "$target: not built (its library is missing)"; return 0; fi
  local regressions="$root/tests/fuzz/regressions/$target"
  if [[ -d $regressions ]] && ! "$binary" "$regressions"/* >"$log" 2>&1; then
    echo "REGRESSION in $target: see $log"
    return 1
  fi
  mkdir -p "$build/corpus/$target"
  local max_len=65536
  [[ $target == fuzz_lmdb ]] && max_len=262144  # an LMDB tree of depth 3 takes some 4 KiB pages
  "$binary" "$build/corpus/$target" "$build/seeds/$target" -max_total_time="$seconds" -max_len="$max_len" \
    -rss_limit_mb=2048 -timeout=30 -artifact_prefix="$build/findings/$target-" -print_final_stats=1 \
    >"$log" 2>&1 || { echo "FINDING in $target: see $log"; return 1; }
  echo "$target: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*') runs in ${seconds} s"
}

status=0
targets=(fuzz_kaldi_object fuzz_kaldi_archive fuzz_compressed_matrix fuzz_wave fuzz_script fuzz_specifier
  fuzz_tfrecord fuzz_example fuzz_datum fuzz_idx fuzz_tar fuzz_lmdb fuzz_protobuf fuzz_threads fuzz_mean_image fuzz_image)
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run_one "${targets[i]}" & first=$!
  second=""
  if ((i + 1 < ${#targets[@]})); then run_one "${targets[i + 1]}" & second=$!; fi
  wait "$first" || status=1
  if [[ -n $second ]]; then wait "$second" || status=1; fi
done
exit $status
