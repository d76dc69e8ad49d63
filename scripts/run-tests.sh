#!/usr/bin/env bash
# Builds everything and runs all tests twice: an optimised Release build, and a build with
# AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/ensure-packages.sh" g++ cmake make libboost1.81-dev catch2 zlib1g-dev gzip \
  libprotobuf-dev protobuf-compiler liblmdb-dev lmdb-utils dataset-fashion-mnist
jobs=$(nproc)

run_suite() {
  local name=$1
  shift
  local build="$root/build/$name"
  echo "== $name build"
  cmake -S "$root" -B "$build" "$@" >/dev/null
  cmake --build "$build" -j "$jobs"
  echo "== $name tests"
  (cd "$build" && ctest --output-on-failure -j "$jobs")
}

run_suite release -DCMAKE_BUILD_TYPE=Release
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_suite sanitize -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS=-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
