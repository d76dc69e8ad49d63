#!/usr/bin/env bash
# The tablio tool on remote objects: copies to and from S3 and nginx, info, index and shard,
# and the exit status of a missing object. Run by tests/remote/with_servers.py, which starts
# the servers and names them in TABLIO_TEST_HTTP_ROOT, TABLIO_TEST_HTTP_URL, TABLIO_TEST_BUCKET.
#   tests/remote/with_servers.py tests/cli/remote.sh TABLIO DATA_DIR WORK_DIR
set -uo pipefail
tablio=$1
data=$2
work=$3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
if [[ -z ${TABLIO_TEST_HTTP_URL:-} ]]; then
  echo "no servers: run this under tests/remote/with_servers.py"
  exit 1
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
bucket="s3://$TABLIO_TEST_BUCKET"
http=$TABLIO_TEST_HTTP_URL

# An archive to S3 and back, byte for byte; a script of its entries, read by key.
feats="$data/kaldi/scp/feats.ark"
expect 0 "$tablio" copy "ark:$feats" "ark:$bucket/feats.ark"
expect 0 "$tablio" copy "ark:$bucket/feats.ark" ark:back.ark
same "$feats" back.ark
expect 0 "$tablio" info "ark:$bucket/feats.ark"
contains out.txt "entries: "
expect 0 "$tablio" index "ark:$bucket/feats.ark" feats.scp
contains feats.scp " $bucket/feats.ark:"
expect 0 "$tablio" copy scp:feats.scp ark:by-key.ark
same "$feats" by-key.ark

# TFRecord from nginx: indexed by URL and offset, its records read back through the index.
tf="$data/tfrecord/generated/tutorial10.tfrecord"
cp "$tf" "$TABLIO_TEST_HTTP_ROOT/tutorial.tfrecord"
expect 0 "$tablio" index --type=example "tfrecord:$http/tutorial.tfrecord" tutorial.scp
contains tutorial.scp "00000009 $http/tutorial.tfrecord:"
expect 0 "$tablio" copy --type=bytes "scp:tutorial.scp" tfrecord:indexed.tfrecord
same "$tf" indexed.tfrecord
expect 0 "$tablio" verify --type=example "tfrecord:$http/tutorial.tfrecord"

# Shards written to S3, read back through a glob (a listing).
expect 0 "$tablio" shard --type=bytes "tfrecord:$tf" "tfrecord:$bucket/shards/t.tfrecord" 3
contains out.txt "$bucket/shards/t-00002-of-00003.tfrecord"
expect 0 "$tablio" copy --type=bytes "tfrecord:$bucket/shards/t-*-of-00003.tfrecord" tfrecord:joined.tfrecord
same "$tf" joined.tfrecord

# A missing object: a failure naming it, exit status 1.
expect 1 "$tablio" info "ark:$bucket/missing.ark"
contains err.txt "$bucket/missing.ark"
contains err.txt "404"
expect 1 "$tablio" info "ark:$http/missing.ark"
contains err.txt "$http/missing.ark"

finish "remote CLI"
