#!/usr/bin/env bash
# Builds the fuzz targets with clang and runs each for SECONDS (default 60), two at a time,
# seeded from tests/data. A finding leaves its input in build/fuzz/findings and fails.
#   tests/fuzz/run.sh [SECONDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
build="$root/build/fuzz"
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
  -DTABLIO_BUILD_TESTS=OFF -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_FUZZERS=ON >/dev/null
cmake --build "$build" -j "$(nproc)"
data="$root/tests/data"
declare -A seeds=(
  [fuzz_example]="$data/tfrecord/generated"
  [fuzz_datum]="$data/caffe"
  [fuzz_tfrecord]="$data/tfrecord/generated $data/tfrecord/corrupt"
  [fuzz_idx]="$data/idx/types $data/idx/bad"
  [fuzz_kaldi_archive]="$data/kaldi/holders"
  [fuzz_specifier]="$data/kaldi/scp"
)
mkdir -p "$build/findings"
run_one() {
  local target=$1
  local corpus="$build/corpus/$target"
  mkdir -p "$corpus"
  # shellcheck disable=SC2086
  "$build/tests/fuzz/$target" "$corpus" ${seeds[$target]} -max_total_time="$seconds" -max_len=65536 \
    -rss_limit_mb=2048 -artifact_prefix="$build/findings/$target-" -print_final_stats=1 \
    >"$build/$target.log" 2>&1 || { echo "FINDING in $target: see $build/$target.log"; return 1; }
  echo "$target: $(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/$target.log")"
}
status=0
targets=(fuzz_example fuzz_datum fuzz_tfrecord fuzz_idx fuzz_kaldi_archive fuzz_specifier)
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  run_one "${targets[i]}" & first=$!
  second=""
  if ((i + 1 < ${#targets[@]})); then run_one "${targets[i + 1]}" & second=$!; fi
  wait "$first" || status=1
  if [[ -n $second ]]; then wait "$second" || status=1; fi
done
exit $status
