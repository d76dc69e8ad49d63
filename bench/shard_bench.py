#!/usr/bin/env python3
"""`tablio shard` against `tablio copy` of the same table to the same format: a shard pass reads
its input twice (once to count its entries, once to write them), and the first must cost next
to nothing beside the second, since it decodes no value.

    bench/shard_bench.py [--build build/release]

Needs the tool in <build>/tools and the Python package in <build>/python. Makes its inputs in
a scratch folder: 600 float matrices of 500x80 (Kaldi's feature shape) as an archive compressed
by Kaldi's method 2 (copy-feats --compress), read as float matrices; the same matrices as a
text archive; and as a TFRecord file of their Example form. Each is split into 8 shards by
count, and copied whole to the same format. Ratios are shard's time over copy's (lower is
faster); the floor beside them is the copy and one more reading of the input's bytes, which
counting a table with no index needs.
"""

import os
import shutil
import subprocess
import tempfile

import numpy as np

from timing import fastest, package, row


def main():
    args, tablio = package(__doc__, "release")
    tool = os.path.join(args.build, "tools", "tablio")
    folder = tempfile.mkdtemp(prefix="tablio-shard-bench-")
    try:
        def run(*arguments):
            subprocess.run([tool, *arguments], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        rng = np.random.default_rng(0)
        with tablio.writer(f"ark:{folder}/feats.ark", type="matrix") as out:
            for i in range(600):
                out[f"utt{i:04d}"] = rng.standard_normal((500, 80), dtype=np.float32)
        run("copy", "--compress", "--compression-method=2", f"ark:{folder}/feats.ark", f"ark:{folder}/cm.ark")
        run("copy", f"ark:{folder}/feats.ark", f"ark,t:{folder}/text.ark")
        run("copy", f"ark:{folder}/feats.ark", f"tfrecord:{folder}/feats.tfrecord")
        cases = [
            ("compressed archive -> 8 archives", f"ark:{folder}/cm.ark", "ark", "--type=matrix"),
            ("compressed archive -> 8 TFRecord files", f"ark:{folder}/cm.ark", "tfrecord", "--type=matrix"),
            ("text archive -> 8 archives", f"ark:{folder}/text.ark", "ark", "--type=matrix"),
            ("TFRecord -> 8 TFRecord files", f"tfrecord:{folder}/feats.tfrecord", "tfrecord", "--type=matrix"),
        ]
        print("tablio shard vs tablio copy (ours / copy's, in time)")
        for name, rspec, out, type_ in cases:
            shard_out, copy_out = f"{folder}/shards", f"{folder}/copy"
            for d in (shard_out, copy_out):
                os.makedirs(d, exist_ok=True)
            ext = "ark" if out == "ark" else "tfrecord"

            def shard():
                run("shard", type_, rspec, f"{out}:{shard_out}/part.{ext}", "8")

            def copy():
                run("copy", type_, rspec, f"{out}:{copy_out}/whole.{ext}")

            def read_input():  # what counting a table that has no index cannot do without
                with open(rspec.split(":", 1)[1], "rb") as f:
                    while f.read(1 << 20):
                        pass

            shard_time, copy_time, read_time = fastest(shard, 3), fastest(copy, 3), fastest(read_input, 3)
            row(name, shard_time, copy_time, "copy of the same table", "<= 1.1x",
                floor=(copy_time + read_time, "the copy and one more reading of its input's bytes"))
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
