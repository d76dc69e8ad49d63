#!/usr/bin/env python3
"""Training at scale, in one run:

- constructing a TableIterableDataset over 1,000 tar shards in S3 (s3rver on loopback), with
  their shard index against without it (counting each shard's samples; target <= 0.01x);
- resuming a DataLoader from a state 90% through an epoch (load_state_dict, then its first
  batch) against reading that 90% (target <= 0.05x);
- reading 3-member WebDataset samples (jpg, cls, json) from tar as samples, against the same
  members through one table per extension read side by side (target <= 0.5x), from a local
  file (in the page cache, where a pass over headers costs little) and from S3 (where each
  pass is a download).

    bench/scale_bench.py [--build build/release]

Needs the Python package built with tablio::curl (<build>/python), PyTorch, boto3 and s3rver
(TABLIO_S3RVER_DIR, or npm-installed into build/s3rver). Ratios are ours / theirs in time.
"""

import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

from timing import ROOT, fastest, package, row

sys.path.insert(0, os.path.join(ROOT, "tests", "remote"))
import servers  # noqa: E402


def construction(tablio, s3):
    from tablio.torch import TableIterableDataset
    bucket = s3.create_bucket("thousand")
    with tablio.writer(f"tar,maxcount=10:s3://{bucket}/train-%06d.tar", type="sample") as w:
        for i in range(10000):
            w[f"{i:07d}"] = {"jpg": bytes(200), "cls": i % 10}
    pattern = f"tar:s3://{bucket}/train-%06d.tar"
    indexed = fastest(lambda: TableIterableDataset(pattern, type="sample"), 3)
    counted = fastest(lambda: TableIterableDataset(pattern, type="sample", index=False), 1)
    row("dataset over 1,000 S3 shards: index vs counting", indexed, counted, "counting each shard", "<= 0.01x")


def resume(tablio, folder):
    from tablio.torch import DataLoader, TableIterableDataset, collate
    with tablio.writer(f"tar,maxcount=1000:{folder}/resume-%04d.tar", type="sample") as w:
        for i in range(100000):
            w[f"{i:07d}"] = {"jpg": bytes(300), "cls": i % 10, "json": b'{"w": 1}'}

    def loader():
        dataset = TableIterableDataset(f"tar:{folder}/resume-%04d.tar", type="sample", decode=True, shuffle=True,
                                       shuffle_buffer=1000, seed=1)
        return DataLoader(dataset, batch_size=64, collate_fn=collate)

    total = len(loader())
    state = {}

    def read_90():
        l = loader()
        for n, _ in enumerate(l, 1):
            if n == total * 9 // 10:
                state.update(json.loads(json.dumps(l.state_dict())))
                return

    def resumed():
        l = loader()
        l.load_state_dict(state)
        next(iter(l))

    reading = fastest(read_90, 1)
    resuming = fastest(resumed, 3)
    row("resume at 90% of an epoch vs reading that 90%", resuming, reading, "reading 90%", "<= 0.05x")


def samples(tablio, folder, s3):
    rng = np.random.default_rng(2)
    bucket = s3.create_bucket("samples")
    local = f"{folder}/samples.tar"
    with tablio.writer(f"tar:{local}", type="sample") as w:
        for i in range(20000):
            w[f"{i:07d}"] = {"jpg": rng.bytes(8000), "cls": i % 1000, "json": json.dumps({"id": i}).encode()}
    s3.client().upload_file(local, bucket, "samples.tar")

    def as_samples(name):
        with tablio.open(f"tar:{name}", type="sample") as table:
            for _ in table.batches(256):
                pass

    def per_extension(name):
        tables = [tablio.open(f"tar,ext={ext}:{name}", type="bytes") for ext in ("jpg", "cls", "json")]
        try:
            for parts in zip(*(t.batches(256) for t in tables)):
                [dict(zip(("jpg", "cls", "json"), values)) for values in zip(*(p[1] for p in parts))]
        finally:
            for t in tables:
                t.close()

    def read_once():  # the least a pass costs: the file's bytes into a buffer, nothing made of them
        window = bytearray(1 << 18)
        with open(local, "rb", buffering=0) as f:
            while f.readinto(window):
                pass

    for where, name in (("a local file", local), ("S3 on loopback", f"s3://{bucket}/samples.tar")):
        floor = (fastest(read_once, 9), "one read() pass over the file") if name == local else None
        row(f"3-member samples from {where}: one pass vs per extension", fastest(lambda: as_samples(name), 9),
            fastest(lambda: per_extension(name), 9), "3 tables by extension", "<= 0.5x", floor=floor)


def main():
    _, tablio = package(__doc__, "release")
    folder = tempfile.mkdtemp(prefix="tablio-scale-")
    try:
        with servers.S3Server(os.path.join(folder, "s3")) as s3:
            os.environ.update(s3.env())
            os.environ["TABLIO_CACHE"] = ""  # every read goes to the server
            construction(tablio, s3)
            resume(tablio, folder)
            samples(tablio, folder, s3)
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
