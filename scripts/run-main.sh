#!/usr/bin/env bash
# The main job: converts Fashion-MNIST's 60,000 training images (Debian's
# dataset-fashion-mnist) into a Caffe LMDB, a TFRecord file and a Kaldi archive with
# examples/convert_mnist, reads each back and checks it. Output: build/main/mnist-out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/ensure-packages.sh" g++ cmake make libboost1.81-dev zlib1g-dev liblmdb-dev dataset-fashion-mnist
build="$root/build/main"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTABLIO_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target convert_mnist -j "$(nproc)"
rm -rf "$build/mnist-out"
"$build/examples/convert_mnist" /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz \
  /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz "$build/mnist-out"
