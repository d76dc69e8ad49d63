#!/usr/bin/env bash
# How the archives here were made: GNU tar in its three formats and Python's tarfile, over one
# tree of WebDataset-style samples (KEY.EXT members), a directory, a file without extension
# and a name longer than 100 bytes. Run from this folder; the expectations (*.expect) list the
# members with extension "bin" as "key<TAB>size<TAB>first byte".
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
long=deep/$(printf 'd%.0s' {1..60})/$(printf 'k%.0s' {1..70})
mkdir -p "$tmp/tree/samples" "$tmp/tree/$(dirname "$long")"
printf 'alpha' > "$tmp/tree/samples/s1.bin"
printf 'seven\n' > "$tmp/tree/samples/s1.cls"
printf '' > "$tmp/tree/samples/s2.bin"
printf '%s' "$(printf 'x%.0s' {1..700})" > "$tmp/tree/samples/s3.bin"
printf 'readme' > "$tmp/tree/README"
printf 'far' > "$tmp/tree/$long.bin"
members=(samples samples/s1.bin samples/s1.cls samples/s2.bin samples/s3.bin README "$long.bin")
for format in ustar gnu posix; do
  # ustar splits the long name into its prefix field; gnu writes a ././@LongLink; posix a pax header
  tar --format=$format --owner=0 --group=0 --mtime=@0 --no-recursion -C "$tmp/tree" -cf "gnu-$format.tar" "${members[@]}"
done
/usr/bin/python3 - "$tmp/tree" "${members[@]}" <<'PY'
import sys, tarfile
root, names = sys.argv[1], sys.argv[2:]
with tarfile.open("python-pax.tar", "w", format=tarfile.PAX_FORMAT) as t:
    for n in names:
        t.add(f"{root}/{n}", arcname=n, recursive=False)
PY
