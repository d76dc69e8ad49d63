#!/usr/bin/env bash
# The tablio tool, end to end, on the files in tests/data: every command on every format with
# every value type, bad input and exit statuses.
#   tests/cli/run.sh TABLIO DATA_DIR WORK_DIR
set -uo pipefail
tablio=$1
data=$2
work=$3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1

kaldi="$data/kaldi"
# type|archive of that type written by Kaldi
cases=(
  "matrix|$kaldi/holders/float-matrix.bin.ark"
  "matrix|$kaldi/scp/feats.ark"
  "compressed-matrix|$kaldi/compressed/cm-method2.bin.ark"
  "vector|$kaldi/holders/float-vector.bin.ark"
  "int-vector|$kaldi/holders/int32-vector.bin.ark"
  "int-vector-vector|$kaldi/holders/int32-vector-vector.bin.ark"
  "token|$kaldi/holders/token.bin.ark"
  "wave|$kaldi/holders/wav.bin.ark"
)

# copy: ark -> each format -> ark gives the archive back byte for byte.
for case in "${cases[@]}"; do
  type=${case%%|*} ark=${case#*|}
  name=$type-$(basename "$ark")
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "tfrecord:$name.tfrecord"
  expect 0 "$tablio" copy --type="$type" "tfrecord:$name.tfrecord" "ark:$name.from-tfrecord.ark"
  same "$ark" "$name.from-tfrecord.ark"
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "lmdb:$name.lmdb"
  expect 0 "$tablio" copy --type="$type" "lmdb:$name.lmdb" "ark:$name.from-lmdb.ark"
  same "$ark" "$name.from-lmdb.ark"
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "tar:$name.tar"
  expect 0 "$tablio" copy --type="$type" "tar:$name.tar" "ark:$name.from-tar.ark"
  same "$ark" "$name.from-tar.ark"
  tar -tf "$name.tar" >/dev/null || fail "GNU tar cannot list $name.tar"
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "ark,scp:$name.copy.ark,$name.scp"
  expect 0 "$tablio" copy --type="$type" "scp:$name.scp" "ark:$name.from-scp.ark"
  same "$ark" "$name.from-scp.ark"
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "tfrecord,gzip:$name.tfrecord.gz"
  expect 0 "$tablio" copy --type="$type" "tfrecord:$name.tfrecord.gz" "ark:| gzip -c > $name.ark.gz"
  gunzip -c "$name.ark.gz" >"$name.from-gzip.ark"
  same "$ark" "$name.from-gzip.ark"
  # info, cat, index and verify on each format.
  for rspec in "ark:$ark" "tfrecord:$name.tfrecord" "lmdb:$name.lmdb" "scp:$name.scp"; do
    expect 0 "$tablio" info --type="$type" "$rspec"
    contains out.txt "entries: "
    expect 0 "$tablio" cat --type="$type" "$rspec"
    expect 0 "$tablio" verify --type="$type" "$rspec"
    contains out.txt ", 0 problems"
  done
  expect 0 "$tablio" index --type="$type" "ark:$ark" "$name.index.scp"
  expect 0 "$tablio" copy --type="$type" "scp:$name.index.scp" "ark:$name.from-index.ark"
  same "$ark" "$name.from-index.ark"
  expect 0 "$tablio" index "tfrecord:$name.tfrecord" "$name.tfrecord.scp"
  expect 0 "$tablio" copy --type="$type" "scp:$name.tfrecord.scp" "ark:$name.from-tfrecord-index.ark"
  same "$ark" "$name.from-tfrecord-index.ark"
  # A script written beside a TFRecord file reads back as the file does, keys and all.
  expect 0 "$tablio" copy --type="$type" "ark:$ark" "tfrecord,scp:$name.pair.tfrecord,$name.pair.scp"
  expect 0 "$tablio" copy --type="$type" "scp:$name.pair.scp" "tfrecord:$name.from-pair-scp.tfrecord"
  same "$name.tfrecord" "$name.from-pair-scp.tfrecord"
  expect 0 "$tablio" index "tar:$name.tar" "$name.tar.scp"
  expect 0 "$tablio" copy --type="$type" "scp:$name.tar.scp" "ark:$name.from-tar-index.ark"
  same "$ark" "$name.from-tar-index.ark"
  # The archive's keys and count survive: info agrees across formats.
  "$tablio" info --type="$type" --keys "ark:$ark" >a.txt 2>/dev/null
  "$tablio" info --type="$type" --keys "tfrecord:$name.tfrecord" >b.txt 2>/dev/null
  diff <(grep -v -e checksums -e stored a.txt) <(grep -v -e checksums -e stored b.txt) >/dev/null || fail "info differs for $name"
done

# Text archives: copy with ark,t gives Kaldi's text archive back.
expect 0 "$tablio" copy "ark:$kaldi/holders/float-matrix.txt.ark" "ark,t:text.ark"
same "$kaldi/holders/float-matrix.txt.ark" text.ark
expect 0 "$tablio" cat "ark:$kaldi/holders/float-matrix.bin.ark"
"$tablio" cat "ark:$kaldi/holders/float-matrix.txt.ark" >text-cat.txt 2>/dev/null
same out.txt text-cat.txt
# info: the bytes on disk, and the values' decoded size as such.
expect 0 "$tablio" info "ark:$kaldi/compressed/cm-method2.bin.ark"
contains out.txt "stored: $(stat -c %s "$kaldi/compressed/cm-method2.bin.ark") bytes in 1 file"
contains out.txt "decoded: 464 bytes in all, 39 to 255 per entry (each value as a binary float matrix object)"
expect 1 "$tablio" info --type=bytes "ark:$kaldi/scp/feats.ark"
contains err.txt "an archive of matrices, vectors or other objects is read with their type: --type=matrix"

# Compression as copy-feats --compress does it: Kaldi's bytes for every method (each
# reference archive holds the source's entries whose keys start with mN_).
expect 0 "$tablio" index "ark:$kaldi/compressed/cm-source.bin.ark" source.scp
for method in 1 2 3 4 5 6 7; do
  grep "^m${method}_" source.scp >"source-$method.scp"
  expect 0 "$tablio" copy --compress --compression-method=$method "scp:source-$method.scp" "ark:cm$method.ark"
  same "$kaldi/compressed/cm-method$method.bin.ark" "cm$method.ark"
done

# Examples: TFRecord -> ark -> TFRecord gives the records back (keys are ordinals when the
# file keeps none); Datums: Caffe's LMDB -> ark -> LMDB gives Caffe's database back.
tf="$data/tfrecord/generated/tutorial10.tfrecord"
expect 0 "$tablio" copy --type=example "tfrecord:$tf" ark:examples.ark
expect 0 "$tablio" copy --type=example ark:examples.ark tfrecord:examples.tfrecord
expect 0 "$tablio" copy --type=bytes tfrecord:examples.tfrecord ark:examples-bytes.ark
# Examples with their keys, through a script written beside them and the file itself alike.
expect 0 "$tablio" copy --type=example tfrecord:examples.tfrecord "tfrecord,scp:pair.tfrecord,pair.scp"
expect 0 "$tablio" copy --type=example scp:pair.scp tfrecord:from-pair-scp.tfrecord
expect 0 "$tablio" copy --type=example tfrecord:pair.tfrecord tfrecord:from-pair.tfrecord
same from-pair.tfrecord from-pair-scp.tfrecord
same examples.tfrecord from-pair.tfrecord
expect 0 "$tablio" cat --type=example "tfrecord:$tf"
contains out.txt "00000000 features { feature { key: "
expect 0 "$tablio" info --type=example "tfrecord:$tf"
contains out.txt "entries: 10"
# A list of files is one table, in every command.
expect 0 "$tablio" info --type=example "tfrecord:$tf,examples.tfrecord"
contains out.txt "entries: 20"
expect 0 "$tablio" verify --type=example "tfrecord:$tf,examples.tfrecord"
# Shards other tools wrote get a shard index beside them.
expect 0 "$tablio" copy --type=example "tfrecord:$tf" "tar,maxcount=4:web-%06d.tar"
rm web.shardindex.json
expect 0 "$tablio" index-shards --type=example "tar:web-%06d.tar"
contains out.txt "web.shardindex.json	3 shards	10 entries"
contains web.shardindex.json '"url": "web-000002.tar", "nsamples": 2'
expect 2 "$tablio" index --type=bytes "tar,ext=*:web-000000.tar" samples.scp
contains err.txt "a sample (ext=*) has several"
expect 0 "$tablio" copy --type=bytes "tfrecord:$tf" tfrecord:raw.tfrecord
same "$tf" raw.tfrecord
lmdb="$data/caffe/fashion_t10k_1000_lmdb"
cp -r "$lmdb" caffe_lmdb && rm -f caffe_lmdb/lock.mdb caffe_lmdb/data.mdb-lock
expect 0 "$tablio" copy --type=datum lmdb:caffe_lmdb ark:datums.ark
expect 0 "$tablio" copy --type=datum ark:datums.ark lmdb:datums_lmdb
same caffe_lmdb/data.mdb datums_lmdb/data.mdb
expect 0 "$tablio" copy --type=datum lmdb:caffe_lmdb tfrecord:datums.tfrecord
expect 0 "$tablio" copy --type=datum tfrecord:datums.tfrecord lmdb:datums2_lmdb
same caffe_lmdb/data.mdb datums2_lmdb/data.mdb
# Datums of float_data and of an encoded image with float_data beside it, through TFRecord.
cp -r "$data/caffe/float_encoded_lmdb" float_encoded && rm -f float_encoded/lock.mdb
expect 0 "$tablio" copy --type=datum lmdb:float_encoded tfrecord:float_encoded.tfrecord
expect 0 "$tablio" copy --type=datum tfrecord:float_encoded.tfrecord lmdb:float_encoded_back
expect 0 "$tablio" copy --type=datum lmdb:float_encoded ark:float_encoded.ark
expect 0 "$tablio" copy --type=datum lmdb:float_encoded_back ark:float_encoded_back.ark
same float_encoded.ark float_encoded_back.ark
# A TFRecord file of compressed matrices reads as matrices, decompressed, as an archive does.
expect 0 "$tablio" copy --type=compressed-matrix "ark:$kaldi/compressed/cm-method1.bin.ark" tfrecord:cm1.tfrecord
expect 0 "$tablio" copy --type=matrix tfrecord:cm1.tfrecord ark:cm1-decompressed.ark
expect 0 "$tablio" copy --type=matrix "ark:$kaldi/compressed/cm-method1.bin.ark" ark:cm1-decompressed-ark.ark
same cm1-decompressed-ark.ark cm1-decompressed.ark
# verify reports a value that does not decode as the table does: at its record, under its key.
"$tablio" verify --type=vector tfrecord:matrix-float-matrix.bin.ark.tfrecord >verify-form.out
grep -q "at byte 12 (key 'a_0x0'): expected feature 'shape'" verify-form.out ||
  fail "verify placed a value's error elsewhere than the table does: $(head -1 verify-form.out)"
# A TFRecord file that keeps no keys is copied without gaining a key feature.
expect 0 "$tablio" copy --type=example "tfrecord:$data/tfrecord/generated/tutorial10.tfrecord" tfrecord:tutorial.tfrecord
same "$data/tfrecord/generated/tutorial10.tfrecord" tutorial.tfrecord
expect 0 "$tablio" cat --type=datum lmdb:caffe_lmdb
contains out.txt "00000000 channels: 1 height: 28 width: 28 data: "
expect 0 "$tablio" info --type=datum lmdb:caffe_lmdb
contains out.txt "shapes: 1x28x28 (1000)"
expect 0 "$tablio" verify --type=datum lmdb:caffe_lmdb

# IDX: items keyed by index, to and from other formats.
images="$data/idx/fashion/t10k-images-100-idx3-ubyte"
expect 0 "$tablio" copy "idx:$images.gz" ark:images.ark
expect 0 "$tablio" copy ark:images.ark idx:images.idx
expect 0 "$tablio" copy idx:images.idx tfrecord:images.tfrecord
"$tablio" cat "idx:$images" >a.txt 2>/dev/null
"$tablio" cat tfrecord:images.tfrecord >b.txt 2>/dev/null
same a.txt b.txt
expect 0 "$tablio" info --type=int-vector "idx:$data/idx/fashion/t10k-labels-100-idx1-ubyte"
contains out.txt "entries: 100"
expect 0 "$tablio" verify "idx:$images"
expect 1 "$tablio" copy --type=token "ark:$kaldi/holders/token.bin.ark" idx:tokens.idx
contains err.txt "IDX items are keyed by their index"
expect 2 "$tablio" copy --type=wave "ark:$kaldi/holders/wav.bin.ark" idx:waves.idx
contains err.txt "entries are arrays of uint8, int8, int16, int32, float or double"

# segments=: the utterances extract-segments cuts, from an archive of recordings.
printf 'u1 b_stereo_8k 0.0001 -1 1\nu2 a_mono_16k 0 1\nu3 c_mono_44k1 0 -1\n' >segments
expect 0 "$tablio" copy "ark,segments=segments,min_segment_length=0:$kaldi/holders/wav.bin.ark" \
  ark:segments.ark
contains err.txt "utterance 'u2' skipped: it ends at sample 16000, too far past the recording's 12"
expect 0 "$tablio" info --type=wave "ark,segments=segments,min_segment_length=0:$kaldi/holders/wav.bin.ark"
contains out.txt "entries: 2"
expect 1 "$tablio" copy --type=wave "ark,segments=segments:$kaldi/holders/nothing.ark" ark:/dev/null
contains err.txt "nothing.ark"

# Bad input: one clear line, a non-zero status; verify reports each problem.
expect 1 "$tablio" verify --type=example "tfrecord:$data/tfrecord/corrupt/bad_datacrc.tfrecord"
contains out.txt "corrupted record at"
contains out.txt "(key '00000001')"  # named as copy names it
contains out.txt "1 problem"
expect 1 "$tablio" verify --type=example "tfrecord:$data/tfrecord/corrupt/bad_lencrc.tfrecord"
# Cut inside a record's header: a problem, as reading the table says; unended ends it there.
expect 1 "$tablio" verify --type=example "tfrecord:$data/tfrecord/corrupt/bad_trunc_hdr.tfrecord"
contains out.txt "12-byte header"
expect 0 "$tablio" verify --type=example "tfrecord,unended:$data/tfrecord/corrupt/bad_trunc_hdr.tfrecord"
expect 1 "$tablio" verify "ark:$kaldi/bad/trunc-in-object.ark"
contains out.txt "trunc-in-object.ark"
expect 1 "$tablio" verify "idx:$data/idx/bad/truncated-data-idx3-ubyte"
contains out.txt "truncated"
expect 1 "$tablio" verify "scp:$kaldi/bad/bad-range.scp"
expect 1 "$tablio" verify "ark:cat $kaldi/scp/feats.ark; exit 3 |"
contains out.txt "status 3"
# An endless command whose output is no archive: an error at once, not a wait for its end.
expect 1 timeout 60 "$tablio" copy "ark:yes |" ark:/dev/null
contains err.txt "format error in 'yes |' at byte 2"
expect 1 "$tablio" copy "ark:$kaldi/bad/trunc-in-object.ark" ark:/dev/null
[[ $(wc -l <err.txt) == 1 ]] || fail "an error is one line: $(cat err.txt)"
expect 1 "$tablio" copy "ark:$kaldi/scp/feats.ark" ark:/dev/full
contains err.txt "No space left on device"
expect 1 "$tablio" info "ark:no-such-file.ark"
contains err.txt "no-such-file.ark"
expect 2 "$tablio" copy --type=nonsense ark:a ark:b
contains err.txt "unknown --type"
expect 2 "$tablio" copy --frobnicate ark:a ark:b
contains err.txt "unknown option --frobnicate"
expect 2 "$tablio" copy ark:a
expect 2 "$tablio" info not-a-specifier
expect 2 "$tablio" copy --compress --type=vector ark:a ark:b
# A compression method without --compress would be ignored: a usage error, with any type.
for type in matrix compressed-matrix; do
  expect 2 "$tablio" copy --type=$type --compression-method=3 ark:a ark:b
  contains err.txt "--compression-method applies with --compress"
done
# A value the output cannot take is bad input (exit 1), named by its key, not a bad command.
printf 'a [ 1 2 ]\nb [ nan 1 ]\n' >nan.txt
expect 1 "$tablio" copy --compress ark,t:nan.txt ark:nan.ark
contains err.txt "the value of key 'b' for 'nan.ark': cannot compress a matrix with NaN values"
# What one thread wrote before the bad matrix, and nothing of it: with threads as without.
"$tablio" info ark:nan.ark >/dev/null
expect 1 "$tablio" copy --compress --threads=3 ark,t:nan.txt ark:nan3.ark
contains err.txt "the value of key 'b' for 'nan3.ark': cannot compress a matrix with NaN values"
cmp nan.ark nan3.ark
expect 2 "$tablio" copy --threads=0 ark:a ark:b
expect 2 "$tablio" copy ark,threads=2,threads=3:a ark:b
# An input cut short: what one thread wrote before the error, every value the output took
# (TABLIO_THREAD_USE=always: those values were still in the threads when the input failed).
for i in $(seq 100 179); do printf 'c%s [ %s 1 2\n 3 4 5 ]\n' "$i" "$i"; done >cut.txt
head -c 1500 cut.txt >cut_short.txt
expect 1 "$tablio" copy --compress ark,t:cut_short.txt ark,scp:cut1.ark,cut1.scp
for threads in 2 4; do
  expect 1 env TABLIO_THREAD_USE=always "$tablio" copy --compress --threads=$threads ark,t:cut_short.txt \
    ark,scp:cut$threads.ark,cut$threads.scp
  cmp -s cut1.ark cut$threads.ark || fail "--threads=$threads kept other entries than one thread of a cut input"
  sed "s/cut$threads.ark/cut1.ark/" cut$threads.scp | cmp -s cut1.scp - || fail "--threads=$threads wrote another script than one thread of a cut input"
done
# A NaN among the last matrices, within what threads hold in flight: the table one thread
# leaves, whatever the threads do (TABLIO_THREAD_USE=always: every value to them).
for i in $(seq 100 139); do printf 'k%s [ %s 1 2\n 3 4 5 ]\n' "$i" "$([[ $i == 137 ]] && echo nan || echo "$i")"; done >late.txt
expect 1 "$tablio" copy --compress ark,t:late.txt ark:late1.ark
for threads in 2 4; do
  expect 1 env TABLIO_THREAD_USE=always "$tablio" copy --compress --threads=$threads ark,t:late.txt ark:late$threads.ark
  contains err.txt "the value of key 'k137' for 'late$threads.ark': cannot compress a matrix with NaN values"
  cmp -s late1.ark late$threads.ark || fail "--threads=$threads left other entries than one thread"
done
# --threads: the same bytes as one thread.
printf 'u1 [ 1 2 3\n 4 5 6 ]\nu2 [ 7 8 9\n 1 2 3 ]\nu3 [ 0.5 0.25 2 ]\n' >t.txt
"$tablio" copy --compress --compression-method=2 ark,t:t.txt ark,scp:one.ark,one.scp 2>/dev/null
"$tablio" copy --compress --compression-method=2 --threads=2 ark,t:t.txt ark,scp:two.ark,two.scp 2>/dev/null
cmp one.ark two.ark
"$tablio" copy --threads=2 "ark,threads=2:one.ark" ark,t:back.txt 2>/dev/null
"$tablio" copy ark:one.ark ark,t:back1.txt 2>/dev/null
cmp back.txt back1.txt
expect 2 "$tablio" nonsense
expect 2 "$tablio"
# shard: the shards' entries, read one after the other, are the table's; names as TensorFlow
# (TFRecord) and split_scp.pl (scripts) give them.
mkdir -p shards
expect 0 "$tablio" shard "tfrecord:$data/tfrecord/tfx/mnist.tfrecord" tfrecord:shards/mnist.tfrecord 3
contains out.txt "shards/mnist-00002-of-00003.tfrecord	333"
cat shards/mnist-0000{0,1,2}-of-00003.tfrecord | cmp -s - "$data/tfrecord/tfx/mnist.tfrecord" ||
  fail "the TFRecord shards, concatenated, are not the file"
expect 0 "$tablio" shard --by=bytes --type=matrix "ark:$kaldi/holders/float-matrix.bin.ark" ark:shards/m.ark 2
cat shards/m.1.ark shards/m.2.ark | cmp -s - "$kaldi/holders/float-matrix.bin.ark" || fail "archive shards differ"
# Kaldi values shard into TFRecord as copy writes them (Examples with their keys), and back.
expect 0 "$tablio" shard --type=matrix "ark:$kaldi/holders/float-matrix.bin.ark" tfrecord:shards/m.tfrecord 2
contains out.txt "tfrecord,key=key:shards/m-00001-of-00002.tfrecord"
expect 0 "$tablio" shard --type=matrix "tfrecord:shards/m-*-of-00002.tfrecord" ark:shards/back.ark 1
cmp -s shards/back.1.ark "$kaldi/holders/float-matrix.bin.ark" || fail "ark -> TFRecord shards -> ark differs"
(cd "$kaldi/scp" && "$tablio" shard scp:feats.scp "scp:$work/shards/feats.scp" 2 >/dev/null) || fail "scp shard"
cat shards/feats.1.scp shards/feats.2.scp | cmp -s - "$kaldi/scp/feats.scp" || fail "script shards differ"
# WebDataset samples (ext=*) reshard whole: each key's members stay together, in order.
mkdir -p web && for k in 0000 0001 0002; do printf "J$k" >web/$k.jpg && printf "${k#000}" >web/$k.cls; done
(cd web && tar --format=gnu -cf ../web.tar 0000.jpg 0000.cls 0001.jpg 0001.cls 0002.jpg 0002.cls) || fail "GNU tar"
expect 0 "$tablio" shard 'tar,ext=*:web.tar' 'tar,ext=*:shards/web.tar' 2
contains out.txt "shards/web-00001-of-00002.tar	1"
(tar -tf shards/web-00000-of-00002.tar && tar -tf shards/web-00001-of-00002.tar) >listing.txt
[ "$(tr '\n' ' ' <listing.txt)" = "0000.jpg 0000.cls 0001.jpg 0001.cls 0002.jpg 0002.cls " ] || fail "sample shards"
expect 0 "$tablio" info --type=sample tar:web.tar
contains out.txt "shapes: jpg+cls (3)"
expect 0 "$tablio" cat --type=sample tar:web.tar
contains out.txt '0001 "jpg": "J0001" "cls": "1"'
expect 0 "$tablio" copy --type=sample tar:web.tar tar:web-copy.tar
[ "$(tar -tf web-copy.tar | tr '\n' ' ')" = "0000.jpg 0000.cls 0001.jpg 0001.cls 0002.jpg 0002.cls " ] || fail "sample copy"
expect 2 "$tablio" copy --type=sample tar:web.tar tfrecord:web.tfrecord
contains err.txt "WebDataset sample values have no Example form for TFRecord"
[ ! -e web.tfrecord ] || fail "a refused copy wrote a file"
head -c 1100 web.tar >web-cut.tar
cp web.tar web2.tar && cp web-cut.tar web-cut2.tar  # a list naming one file twice is refused
expect 1 "$tablio" verify 'tar,ext=*:web-cut.tar,web.tar,web-cut2.tar,web2.tar'  # --type=sample, from ext=*
contains out.txt "6 entries checked, 2 problems"
contains out.txt "format error in 'web-cut.tar' at byte 1024"
# Under 'p' a bad file ends the table: said on standard error, and a problem for verify.
expect 0 "$tablio" copy 'tar,ext=*,p:web.tar,web-cut.tar,web2.tar' tar:web-p.tar
contains err.txt "warning: under 'p', the table ended early or left out entries"
contains err.txt "copied 3 entries"
expect 1 "$tablio" verify 'tar,ext=*,p:web-cut.tar,web.tar'
contains out.txt "3 entries checked, 1 problem"
expect 2 "$tablio" shard --type=bytes 'tar,ext=*:web.tar' 'tar:shards/blob.tar' 2
contains err.txt "reads samples (ext=*), which 'tar:shards/blob.tar' would write as members KEY.bin"
expect 2 "$tablio" copy --type=bytes 'tar,ext=*:web.tar' 'tar:blob.tar'
[ ! -e blob.tar ] && [ ! -e shards/blob-00000-of-00002.tar ] || fail "a refused copy wrote a file"
expect 2 "$tablio" shard 'tar,ext=*:web.tar' 'tar,ext=*:shards/web-%06d.tar' 2
contains err.txt "is a numbered name"
[ ! -e shards/web-000000-00000-of-00002.tar ] || fail "a refused shard name wrote a shard"
expect 2 "$tablio" shard --by=lines "tfrecord:$data/tfrecord/tfx/mnist.tfrecord" tfrecord:shards/x 2
expect 2 "$tablio" shard "tfrecord:$data/tfrecord/tfx/mnist.tfrecord" tfrecord:shards/x 0
for command in copy info cat index verify shard; do
  expect 0 "$tablio" "$command" --help
  contains out.txt "Usage: tablio $command"
done
expect 0 "$tablio" --help

finish CLI
