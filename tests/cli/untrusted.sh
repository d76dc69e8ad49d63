#!/usr/bin/env bash
# The tablio tool on input from others: uploads that name commands, secrets and devices, keys
# that would drive a terminal, and the exit statuses that tell a bad upload from a bad command.
#   tests/cli/untrusted.sh TABLIO DATA_DIR WORK_DIR
set -uo pipefail
tablio=$1
data=$2
work=$3
source "$(dirname "${BASH_SOURCE[0]}")/checks.sh"
rm -rf "$work" && mkdir -p "$work/up" && cd "$work" || exit 1
kaldi="$data/kaldi"
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY
cp "$kaldi/scp/feats.ark" up/feats.ark

# A script line that runs a command and prints a secret: refused by --no-pipes, --untrusted and
# TABLIO_UNTRUSTED=1, an input error (1), with no file made and no secret printed.
printf 'utt0 id > PWNED; printenv AWS_SECRET_ACCESS_KEY |\n' >up/upload.scp
for how in "--no-pipes" "--untrusted" "--confine=up"; do
  expect 1 "$tablio" info "$how" scp:up/upload.scp
  contains err.txt "commands are refused"
  [ ! -e PWNED ] || fail "$how ran the command"
  if grep -q "$AWS_SECRET_ACCESS_KEY" out.txt err.txt; then fail "$how printed the secret"; fi
done
TABLIO_UNTRUSTED=1 expect 1 "$tablio" info scp:up/upload.scp
[ ! -e PWNED ] || fail "TABLIO_UNTRUSTED=1 ran the command"
grep -q Usage: err.txt && fail "an input error is not a usage error: $(cat err.txt)"
# Trusted, the command runs (it is the user's own script), and its output is quoted 16 bytes at most.
expect 1 "$tablio" info scp:up/upload.scp
rm -f PWNED
if grep -q "$AWS_SECRET_ACCESS_KEY" err.txt; then fail "an error quoted more than 16 bytes: $(cat err.txt)"; fi

# Scripts that point out of their folder, at devices and at standard input.
for target in /etc/passwd /proc/self/environ "$work/up/../secret.txt" /dev/zero - "feats.ark"; do
  printf 'utt0 %s\n' "$target" >up/out.scp
  expect 1 "$tablio" info --untrusted scp:up/out.scp
done
(cd up && printf 'utt0 feats.ark:5\n' >in.scp && TABLIO_UNTRUSTED=1 "$tablio" info scp:in.scp >/dev/null) ||
  fail "a script naming a file in its own folder"
expect 1 "$tablio" info --untrusted "ark:-" </dev/null
contains err.txt "standard input"
expect 1 "$tablio" info --no-network "ark:http://127.0.0.1:9/x.ark"
contains err.txt "network access is disabled"
expect 1 "$tablio" info --untrusted "ark,cache=$work/c:up/feats.ark"
[ ! -e "$work/c" ] || fail "a specifier made a cache under --untrusted"

# Keys that would drive a terminal are refused on reading; what the tool prints is escaped.
printf 'utt\033]0;pwned\007 \000BFM \004\001\000\000\000\004\001\000\000\000\000\000\000\000' >esc.ark
expect 1 "$tablio" info --keys ark:esc.ark
contains err.txt "expected a key"
if grep -q $'\033' out.txt err.txt; then fail "an escape byte reached the terminal"; fi
printf 'a\033[2J b\n' >tok.txt
expect 1 "$tablio" cat --type=token ark,t:tok.txt
if grep -q $'\033' out.txt err.txt; then fail "an escape byte reached the terminal"; fi
printf 'a b\033[2J\n' >tok.txt
expect 1 "$tablio" cat --type=token ark,t:tok.txt
contains err.txt "expected a token of printable bytes, found 'b\x1b[2J'"
printf 'a b\302\233c\n' >tok.txt  # U+009B, a C1 control that some terminals obey
expect 0 "$tablio" cat --type=token ark,t:tok.txt
contains out.txt 'a b\xc2\x9bc'

# Limits from the command line, and shards named twice.
expect 1 "$tablio" info --max-record-bytes=50 "ark:$kaldi/scp/feats.ark"
contains err.txt "limits::max_record_bytes"
expect 1 "$tablio" info --max-total-bytes=100 "ark:$kaldi/scp/feats.ark"
contains err.txt "limits::max_total_bytes"
cp up/feats.ark a.ark
expect 2 "$tablio" info "tfrecord:a{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}{,}.tfrecord"
contains err.txt "twice"

# A cut gzip TFRecord file is one problem, once: verify ends.
gzip -c "$data/tfrecord/generated/tutorial10.tfrecord" | head -c 60 >cut.tfrecord.gz
timeout 20 "$tablio" verify --type=example tfrecord:cut.tfrecord.gz >out.txt 2>err.txt
[[ $? == 1 ]] || fail "verify of a cut gzip TFRecord file: exit $?"
contains out.txt "1 problem"
# A link planted where the index beside the shards goes is not written through.
mkdir -p shards && cp "$data/tar/gnu-ustar.tar" shards/s-000000.tar && echo keep >victim.txt
ln -sf "$work/victim.txt" shards/s.shardindex.json
expect 1 "$tablio" index-shards --untrusted 'tar,ext=*:shards/s-%06d.tar'
contains err.txt "symbolic link"
[ "$(cat victim.txt)" = keep ] || fail "index-shards wrote through a planted link"
# A value that cannot be compressed is bad input, named where it is.
printf 'a [ 1 2 ]\nb [ nan 1 ]\n' >nan.txt
expect 1 "$tablio" verify --type=compressed-matrix ark,t:nan.txt
contains out.txt "NaN"
expect 1 "$tablio" info --type=compressed-matrix ark,t:nan.txt
# A URL's credentials never reach a message, even in a specifier that is wrong.
expect 2 "$tablio" info 'tfrecord,bogus:https://user:SECRETPW@host/x?X-Amz-Signature=SIGSECRET'
if grep -q "SECRETPW\|SIGSECRET" err.txt; then fail "a message showed credentials: $(cat err.txt)"; fi
expect 1 "$tablio" info --no-pipes 'ark:https://user:SECRETPW@host/some/long/path/x.ark |'
if grep -q "SEC\|SIGSECRET" err.txt; then fail "a message showed credentials: $(cat err.txt)"; fi
# A script line that names no input (a NUL, an offset past 2^63) is the script's error, as is a key
# of the input that the output cannot hold: 1, no usage.
printf 'utt0 feats.ark:99999999999999999999\n' >up/offset.scp
expect 1 "$tablio" info scp:up/offset.scp
contains err.txt "utt0"
printf 'utt0 feats\000.ark\n' >up/nul.scp
expect 1 "$tablio" info scp:up/nul.scp
printf '../escape 1\n' >key.txt
expect 1 "$tablio" copy --type=token ark,t:key.txt tar:out.tar
contains err.txt "cannot name a tar member"
if grep -q Usage: err.txt; then fail "a key from the input is no usage error: $(cat err.txt)"; fi
# --confine confines what the tool writes too: a folder link planted in the upload leads nowhere.
mkdir -p elsewhere && ln -sfn "$work/elsewhere" up/planted
printf 'k 1\n' >up/ok.txt
expect 1 "$tablio" copy --confine="$work/up" --type=token "ark,t:$work/up/ok.txt" "ark:$work/up/planted/x.ark"
contains err.txt "outside the confining folder"
[ ! -e elsewhere/x.ark ] || fail "copy wrote through a planted folder link"
expect 0 "$tablio" copy --confine="$work/up" --type=token "ark,t:$work/up/ok.txt" "ark:$work/up/own.ark"
printf 'utt0 :5\n' >up/empty-file.scp
expect 1 "$tablio" info scp:up/empty-file.scp

# Every command opens its inputs by the same rules: a link the upload planted, to a table outside
# it, is refused by index as by cat, info, verify, copy and index-shards, and nothing of the file
# out there reaches the output or a message.
mkdir -p links/up && cp "$data/tar/gnu-ustar.tar" links/outside.tar && printf 'XSECRETXSECRETXSECRETX\n' >links/outside.ark
ln -sf ../outside.tar links/up/b.tar && ln -sf ../outside.ark links/up/a.ark
for spec in tar:links/up/b.tar ark:links/up/a.ark; do
  for command in "index --type=bytes $spec links/x.scp" "cat --type=bytes $spec" "info --type=bytes $spec" \
    "verify --type=bytes $spec" "copy --type=bytes $spec ark:links/x.ark"; do
    # shellcheck disable=SC2086
    TABLIO_UNTRUSTED=1 expect 1 "$tablio" $command
    contains err.txt "outside the confining folder"
    if grep -q "XSECRET\|samples/" err.txt out.txt; then fail "$command showed the outside file: $(cat err.txt)"; fi
    if grep -qs "samples/" links/x.scp; then fail "$command wrote a script of the outside file"; fi
  done
done
TABLIO_UNTRUSTED=1 expect 1 "$tablio" index-shards --type=bytes 'tar:links/up/b.tar'
contains err.txt "outside the confining folder"
# ... and its outputs by the same rules: index --confine writes no script through a link out of the
# folder, and runs no command as its script.
mkdir -p links/conf && cp "$kaldi/scp/feats.ark" links/conf/m.ark && echo keep >links/victim.txt
ln -sf ../victim.txt links/conf/planted.scp
expect 1 "$tablio" index --confine=links/conf ark:links/conf/m.ark links/conf/planted.scp
contains err.txt "never writes through one"
[ "$(cat links/victim.txt)" = keep ] || fail "index wrote through a planted link"
expect 1 "$tablio" index --confine=links/conf ark:links/conf/m.ark "| cat >$work/links/PWNED"
contains err.txt "commands are refused"
[ ! -e links/PWNED ] || fail "index ran its script as a command under --confine"
expect 1 "$tablio" index --confine=links/conf ark:links/conf/m.ark links/outside.scp
contains err.txt "outside the confining folder"
expect 0 "$tablio" index --confine=links/conf ark:links/conf/m.ark links/conf/m.scp

# The shards of an untrusted script are scripts a table could read: no command, no name outside
# its folder, no control byte is copied into them.
mkdir -p split && cp up/feats.ark split/ && printf 'utt1 split/feats.ark:5\n' >split/ok.scp
expect 0 "$tablio" shard --untrusted scp:split/ok.scp scp:split/o.scp 2
for line in "utt2 touch $work/PWNED |" 'utt3 /etc/passwd' 'utt4 ../up/feats.ark' $'utt5 \033[2Jx.ark:1'; do
  printf 'utt1 split/feats.ark:5\n%s\n' "$line" >split/bad.scp
  expect 1 "$tablio" shard --untrusted scp:split/bad.scp scp:split/b.scp 2
  if grep -qs "utt[2-5]" split/b.*.scp; then fail "shard copied '$line' into a shard"; fi
done
[ ! -e PWNED ] || fail "a shard's line ran"
for line in 'utt6 http://127.0.0.1:9/x.ark:5' 'utt7 | cat'; do
  printf 'utt1 split/feats.ark:5\n%s\n' "$line" >split/bad.scp
  expect 1 "$tablio" shard --untrusted scp:split/bad.scp scp:split/b.scp 2
done

# Numbered shards that are links to one file are refused as a glob's are: no file read again.
mkdir -p numbered && cp "$data/tar/gnu-ustar.tar" numbered/train-000000.tar
ln -sf train-000000.tar numbered/train-000001.tar
for pattern in 'train-%06d.tar' 'train-*.tar'; do
  expect 1 "$tablio" info --untrusted --type=bytes "tar,ext=*:$work/numbered/$pattern"
  contains err.txt "not a regular file"
done
expect 0 "$tablio" info --type=bytes "tar,ext=*:$work/numbered/train-%06d.tar"  # trusted: the user's links

# --untrusted closes the network as TABLIO_UNTRUSTED=1 does: a script line's URL is not fetched.
printf 'k1 http://127.0.0.1:9/internal.ark:5\n' >up/url.scp
expect 1 "$tablio" verify --untrusted scp:up/url.scp
contains out.txt "network access is disabled"
expect 1 "$tablio" info --untrusted 'ark:http://127.0.0.1:9/x.ark'
contains err.txt "network access is disabled"
# ... not even to look for a pattern's shards; and the URL is quoted short, escaped.
expect 1 timeout 20 "$tablio" info --untrusted --type=bytes 'tar:http://127.0.0.1:9/s-%06d.tar'
contains err.txt "network access is disabled"
printf 'k1 http://127.0.0.1:9/\033]0;x\007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.ark\n' >up/esc-url.scp
expect 1 "$tablio" info --untrusted scp:up/esc-url.scp
if grep -q $'\033' err.txt || grep -q aaaaaaaaaa err.txt; then fail "a URL was quoted whole: $(cat err.txt)"; fi

# A wrong command line is 2 with its usage; bad input never is.
expect 2 "$tablio" info --max-record-bytes=lots "ark:$kaldi/scp/feats.ark"
contains err.txt "Usage:"
expect 2 "$tablio" info --confine
expect 1 "$tablio" verify --untrusted scp:up/upload.scp
finish untrusted-input
