#!/usr/bin/env bash
# Builds everything and runs all tests: an optimised Release build with GCC and libstdc++;
# a build with AddressSanitizer and UndefinedBehaviorSanitizer on clang with libc++ (macOS's
# standard library) and the POSIX paths macOS takes; the thread and remote tests under
# ThreadSanitizer; every fuzz target for FUZZ_SECONDS (default 15) each, built with clang; and the
# C++ tests of formats and streams on Windows (mingw-w64, run under wine, with the tool) and on
# 64-bit ARM (cross-built with GCC, run under qemu-aarch64-static). Each part's time is printed
# at the end.
# The sanitized builds keep line tables alone for debug information (stacks keep their lines;
# full information doubled their compile time).
# Remote storage is tested against nginx and s3rver, started by the tests on loopback.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Each part's time, printed when it ends and summed up at the end.
stage_times=""
stage() {
  local now=$SECONDS
  [[ -n ${stage_name:-} ]] && stage_times+="$(printf '%-34s %5d s' "$stage_name" $((now - stage_start)))\n"
  stage_name=$1 stage_start=$now
  echo "== $1"
}
trap '[[ -n ${stage_name:-} ]] && stage done && printf "== times\n%b" "$stage_times"' EXIT

stage "packages"
"$root/scripts/ensure-packages.sh" g++ cmake make libboost1.81-dev catch2 zlib1g-dev gzip \
  libprotobuf-dev protobuf-compiler liblmdb-dev lmdb-utils dataset-fashion-mnist \
  clang-14 libclang-rt-14-dev libc++-14-dev libc++abi-14-dev python3 pkg-config mkdocs doxygen \
  mkdocs-material python3-pymdownx mkdocstrings mkdocstrings-python-handlers \
  pybind11-dev python3-pybind11 python3-dev python3-numpy python3-pytest python3-pip python3-setuptools \
  python3-protobuf python3-lmdb python3-torch python3-torchvision python3-dask python3-distributed python3-pandas \
  libcurl4-openssl-dev curl nginx-light openssl awscli python3-botocore python3-boto3 nodejs \
  libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev python3-pil libfast-float-dev \
  g++-mingw-w64-x86-64-posix libz-mingw-w64-dev wine wine64 ninja-build \
  g++-aarch64-linux-gnu qemu-user-static zlib1g-dev:arm64 liblmdb-dev:arm64
jobs=$(nproc)

# Remote objects are tested against real servers on loopback: nginx (above), and s3rver, an S3
# in node, installed from the npm registry into the build folder. Their tests may not skip here.
export TABLIO_S3RVER_DIR="$root/build/s3rver" TABLIO_REQUIRE_SERVERS=1
if [ ! -x "$TABLIO_S3RVER_DIR/node_modules/.bin/s3rver" ]; then
  command -v npm >/dev/null || "$root/scripts/ensure-packages.sh" npm
  npm install --silent --no-audit --no-fund --prefix "$TABLIO_S3RVER_DIR" s3rver@3.7.1
fi

configure_and_build() {
  local name=$1 target=$2
  shift 2
  stage "$name build"
  cmake -S "$root" -B "$root/build/$name" "$@" >/dev/null
  cmake --build "$root/build/$name" -j "$jobs" ${target:+--target $target}
}

run_suite() {
  local name=$1
  shift
  configure_and_build "$name" "" "$@"
  stage "$name tests"
  (cd "$root/build/$name" && ctest --output-on-failure -j "$jobs")
}

run_suite release -DCMAKE_BUILD_TYPE=Release -DTABLIO_BUILD_PYTHON=ON
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The checks that do not depend on the build's flags (packaging, warnings, the docs site...)
# ran in the release suite, and so did the cross-checks against libprotobuf (built for
# libstdc++), whose code the unit tests, the docs' programs and the fuzz targets run here.
# TABLIO_POSIX_ONLY takes the calls every POSIX system has where Linux has its own (pipe2,
# sigtimedwait...), so that this build runs what a macOS build runs.
run_suite sanitize -DCMAKE_BUILD_TYPE=Debug -DTABLIO_BUILD_PYTHON=ON -DTABLIO_TOOLING_TESTS=OFF \
  -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only \
  "-DCMAKE_CXX_FLAGS=-stdlib=libc++ -DTABLIO_POSIX_ONLY -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"

configure_and_build threads test_threads -DCMAKE_BUILD_TYPE=Debug -DTABLIO_BUILD_EXAMPLES=OFF \
  -DCMAKE_CXX_FLAGS_DEBUG=-g1 "-DCMAKE_CXX_FLAGS=-O1 -fsanitize=thread"
cmake --build "$root/build/threads" -j "$jobs" --target test_remote
stage "threads tests (ThreadSanitizer)"
export TSAN_OPTIONS=halt_on_error=1
"$root/build/threads/tests/test_threads"
/usr/bin/python3 "$root/tests/remote/with_servers.py" "$root/build/threads/tests/test_remote"

if command -v clang++-14 >/dev/null; then
  stage "fuzz targets, ${FUZZ_SECONDS:-15} s each"
  "$root/tests/fuzz/run.sh" "${FUZZ_SECONDS:-15}"
fi

# Other systems' builds of the C++ tests of formats and streams (with a cross toolchain whose
# CMAKE_CROSSCOMPILING_EMULATOR runs them), at -O1: the Python module, the examples and the tests
# of separate compilation (the same tests over src/tablio.cpp) are the Linux builds'.
#   cross_suite NAME TOOLCHAIN TOOL(ON|OFF) CXXFLAGS TEST...: with TOOL=ON, the tool too, tested there.
cross_suite() {
  local name=$1 toolchain=$2 tool=$3 flags=$4
  shift 4
  local targets="$*" tests="$*"
  if [[ $tool == ON ]]; then targets+=" tablio_cli" tests+=" cli_on_target"; fi
  # Ninja: make builds the targets named on its command line one after another, and most of
  # these are one source each, which left a core idle. (A folder made by make is made anew.)
  grep -qs "^CMAKE_GENERATOR:INTERNAL=Ninja$" "$root/build/$name/CMakeCache.txt" || rm -rf "$root/build/$name"
  configure_and_build "$name" "$targets" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/$toolchain.cmake" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS="$flags" -DTABLIO_BUILD_PYTHON=OFF \
    -DTABLIO_BUILD_EXAMPLES=OFF -DTABLIO_BUILD_TOOLS="$tool" -DTABLIO_TOOLING_TESTS=OFF
  stage "$name tests"
  (cd "$root/build/$name" && ctest --output-on-failure -j "$jobs" -R "^(${tests// /|})\$")
}
# Windows x86-64: mingw-w64, run under wine, with the standard C++ spellings MSVC compiles where
# GCC's extensions are used elsewhere (TABLIO_GNU_EXTENSIONS=0; mingw's own are Linux GCC's). Not
# there: test_faults (POSIX's faults: fork, signals, rlimits, /dev/full; the pipe failures Windows
# has too are test_streams'), test_memory (a forked child's peak memory) and LMDB writing (Debian
# has no liblmdb for mingw-w64).
cross_suite windows x86_64-w64-mingw32 ON -DTABLIO_GNU_EXTENSIONS=0 test_streams test_codecs test_holders test_matrices test_tables \
  test_kaldi_facade test_untrusted test_contracts test_tfrecord test_zlib test_example test_caffe_idx \
  test_threads test_allocation
# 64-bit ARM: cross-built with GCC, run under qemu-aarch64-static.
cross_suite aarch64 aarch64-linux-gnu OFF "" test_streams test_codecs test_holders test_matrices test_tables \
  test_kaldi_facade test_untrusted test_contracts test_tfrecord test_zlib test_example test_caffe_idx \
  test_faults test_threads test_memory test_allocation
