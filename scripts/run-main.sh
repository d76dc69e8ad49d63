#!/usr/bin/env bash
# The main job: builds tablio's examples and runs the quickstart.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/ensure-packages.sh" g++ cmake make libboost1.81-dev
build="$root/build/main"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTABLIO_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target quickstart -j "$(nproc)"
"$build/examples/quickstart" "$build/quickstart-out"
