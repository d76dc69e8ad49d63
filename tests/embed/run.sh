#!/usr/bin/env bash
# Two plugins embedding tablio with different options, linked into one program in both orders:
#   run.sh GXX CLANGXX INCLUDE_DIRS(|-separated) TFRECORD_DATA_DIR WORK_DIR
set -euo pipefail
gxx=$1 clangxx=$2 includes=$3 data=$(cd "$4" && pwd) work=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" && cd "$work"
flags=(-std=c++20 -O2 -fPIC)
IFS='|' read -ra dirs <<<"$includes"
for dir in "${dirs[@]}"; do flags+=("-I$dir"); done
"$gxx" "${flags[@]}" -shared -DTABLIO_PLUGIN_NAME=a -DTABLIO_WITH_ZLIB "$here/plugin.cpp" -o libtablio_plugin_a.so -lz &
"$clangxx" "${flags[@]}" -shared -DTABLIO_PLUGIN_NAME=b "$here/plugin.cpp" -o libtablio_plugin_b.so &
wait -n && wait -n
status=0
for order in "a b" "b a"; do
  set -- $order
  "$gxx" -O2 "$here/host.cpp" -L. -Wl,--no-as-needed -ltablio_plugin_$1 -ltablio_plugin_$2 -Wl,-rpath,"$work" \
    -o "host_$1$2"
  echo "== linked -ltablio_plugin_$1 -ltablio_plugin_$2"
  "./host_$1$2" "$data/tutorial10.tfrecord" "$data/tutorial10.gz.tfrecord" || status=1
done
exit $status
