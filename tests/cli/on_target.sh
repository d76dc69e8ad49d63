#!/usr/bin/env bash
# The tablio tool built for another system, run there through its emulator (wine, qemu): Kaldi's
# archives through every format and back give Kaldi's bytes; `-` is binary stdin and stdout; an
# input command runs through the system's shell; LMDB is read by tablio's own reader, and writing
# one without liblmdb is refused at open. Names are relative, as the target system spells them.
#   tests/cli/on_target.sh "EMULATOR" TABLIO DATA_DIR WORK_DIR
set -uo pipefail
runner=$1
tool=$2
data=$3
work=$4
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
export LC_ALL=C.UTF-8  # the arguments' bytes are UTF-8 (wine converts them by the locale)
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
cp "$tool" . && tool_name=$(basename "$tool")
tablio() { $runner "./$tool_name" "$@"; }
# The shell of a command is the target's (wine's cmd.exe runs its programs itself) or, under
# qemu-user, the host's, which runs the target's programs through the emulator.
inner=""
[[ $runner == *qemu* ]] && inner="$runner "

cp "$data/kaldi/scp/feats.ark" "$data/kaldi/holders/int32-vector.bin.ark" "$data/kaldi/holders/wav.bin.ark" \
  "$data/kaldi/holders/float-matrix.bin.ark" "$data/kaldi/holders/float-matrix.txt.ark" .
cp -r "$data/caffe/fashion_t10k_1000_lmdb" caffe
cases=("matrix|feats.ark" "int-vector|int32-vector.bin.ark" "wave|wav.bin.ark")

for case in "${cases[@]}"; do
  type=${case%%|*} ark=${case#*|}
  for out in "tfrecord:$type.tfrecord" "tfrecord,gzip:$type.tfrecord.gz" "tar:$type.tar"; do
    back=$type.from-${out%%:*}.ark
    expect 0 tablio copy --type="$type" "ark:$ark" "$out"
    expect 0 tablio copy --type="$type" "${out/,gzip/}" "ark:$back"
    same "$ark" "$back"
  done
  expect 0 tablio copy --type="$type" "ark:$ark" "ark,scp:$type.ark,$type.scp"
  expect 0 tablio verify --type="$type" "scp:$type.scp"
  expect 0 tablio copy --type="$type" "scp:$type.scp" "ark:$type.from-scp.ark"
  same "$ark" "$type.from-scp.ark"
done
gzip -t matrix.tfrecord.gz 2>/dev/null || fail "gzip cannot read the GZIP TFRecord"
# A text archive, as Kaldi writes it ("\n" ends its lines there too).
expect 0 tablio copy ark:float-matrix.bin.ark ark,t:text.ark
same float-matrix.txt.ark text.ark
expect 0 tablio copy ark:float-matrix.txt.ark ark:from-text.ark
expect 0 tablio copy ark:from-text.ark ark,t:text-again.ark
same float-matrix.txt.ark text-again.ark

# Names in UTF-8, beyond any code page: as arguments, in a script, and in a command's arguments.
mkdir données
cp feats.ark "données/ünï-é.ark"
expect 0 tablio copy "ark:données/ünï-é.ark" "ark,scp:données/sortie-ü.ark,données/sortie-ü.scp"
same feats.ark "données/sortie-ü.ark"
expect 0 tablio copy "ark:$inner./$tool_name copy scp:données/sortie-ü.scp ark:- |" "ark:données/piped-音λ.ark"
same feats.ark "données/piped-音λ.ark"

# Binary standard input and output: no byte is translated.
tablio copy ark:feats.ark ark:- >stdout.ark 2>err.txt || fail "copy to stdout: $(head -3 err.txt)"
same feats.ark stdout.ark
tablio copy ark:- ark:stdin.ark <feats.ark 2>err.txt || fail "copy from stdin: $(head -3 err.txt)"
same feats.ark stdin.ark
expect 0 tablio info ark:feats.ark
if grep -q $'\r' out.txt; then fail "info's output has carriage returns"; fi

# An input command, through the system's shell.
expect 0 tablio copy "ark:$inner./$tool_name copy ark:feats.ark ark:- |" ark:piped.ark
same feats.ark piped.ark
expect 1 tablio copy "ark:$inner./$tool_name copy ark:missing.ark ark:- |" ark:none.ark
contains err.txt "missing.ark"

# Caffe's LMDB, read by key and in order; written where liblmdb was linked, else refused at open.
expect 0 tablio copy --type=datum lmdb:caffe tfrecord:caffe.tfrecord
expect 0 tablio info --type=datum tfrecord:caffe.tfrecord
contains out.txt "1000"
if ! tablio copy --type=datum lmdb:caffe lmdb:caffe-copy >out.txt 2>err.txt; then
  contains err.txt "needs liblmdb"
fi

finish "on-target tool"
