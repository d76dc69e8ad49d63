#!/usr/bin/env python3
"""tablio's tar shards against the real webdataset and wids packages, in one run.

    bench/peers_bench.py [--build build/bench] [--peers ../shared/peers]

Needs the package built (PYTHONPATH=<build>/python, or installed with torch), Debian's
dataset-fashion-mnist, python3-braceexpand and python3-yaml, and the peers' sources: the
webdataset and wids packages (BSD-3-Clause), which are not in Debian. They are optional: a
peer that is not found is said and skipped.

The input is what WebDataset users make of Fashion-MNIST: its 60,000 training images as six
tar shards of 10,000 samples, each sample a `.bin` member (the 784 pixels) and a `.cls`
member (the label), written by tablio's writer (tarfile reads them as GNU tar's). Workloads:

  - an epoch in order, samples as {extension: bytes}: webdataset's WebDataset pipeline
    against tablio.open(..., type="sample");
  - the same through a DataLoader (num_workers=0, batches of 256 of the raw bytes);
  - 5,000 samples by index in a shuffled order: wids's ShardListDataset against
    tablio.torch.TableDataset, each from nothing (indexing the shards counts).

Each figure is the fastest of several passes; ratios are tablio's time / the peer's (lower
is faster).
"""

import os
import random
import shutil
import sys
import tempfile

import numpy as np

from timing import ROOT, fastest, package, row

FASHION = "/usr/share/datasets/fashion-mnist"
SHARDS, PER_SHARD = 6, 10000


def fashion_images():
    import gzip
    with gzip.open(os.path.join(FASHION, "train-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(FASHION, "train-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images, labels


def make_shards(tablio, folder):
    images, labels = fashion_images()
    with tablio.writer(f"tar,maxcount={PER_SHARD}:{folder}/train-%06d.tar", type="sample") as w:
        for i in range(SHARDS * PER_SHARD):
            w[f"{i:06d}"] = {"bin": images[i].tobytes(), "cls": int(labels[i])}
    return [f"{folder}/train-{n:06d}.tar" for n in range(SHARDS)]


def import_peer(peers, folder, name):
    path = os.path.join(peers, folder)
    if not os.path.isdir(path):
        print(f"  ({name} not found under {peers}: skipped)")
        return None
    sys.path.insert(0, path)
    try:
        return __import__(name)
    except ImportError as error:
        print(f"  ({name} cannot be imported: {error}: skipped)")
        return None


def main():
    args, tablio = package(__doc__, "bench")
    peers = os.environ.get("TABLIO_PEERS", os.path.join(ROOT, "..", "shared", "peers"))
    folder = tempfile.mkdtemp(prefix="tablio-peers-")
    try:
        shards = make_shards(tablio, folder)
        pattern = f"{folder}/train-{{000000..{SHARDS - 1:06d}}}.tar"
        count = SHARDS * PER_SHARD
        print(f"{count} samples in {SHARDS} tar shards ({sum(os.path.getsize(s) for s in shards) / 1e6:.1f} MB)")

        def tablio_epoch():
            n = sum(1 for _ in tablio.open("tar:" + pattern, type="sample"))
            assert n == count

        wds = import_peer(peers, "webdataset/src", "webdataset")
        if wds:
            def webdataset_epoch():
                n = sum(1 for _ in wds.WebDataset(shards, shardshuffle=False, empty_check=False))
                assert n == count

            row("epoch in order, {ext: bytes}", fastest(tablio_epoch, 3), fastest(webdataset_epoch, 3),
                "webdataset.WebDataset", "< 1")

            import torch
            from tablio.torch import TableIterableDataset

            def raw_batch(samples):
                return (torch.frombuffer(bytearray(b"".join(s["bin"] for s in samples)), dtype=torch.uint8),
                        [s["cls"] for s in samples])

            def loader_epoch(dataset):
                loader = torch.utils.data.DataLoader(dataset, batch_size=256, num_workers=0, collate_fn=raw_batch)
                assert sum(len(labels) for _, labels in loader) == count

            row("DataLoader epoch, batches of 256",
                fastest(lambda: loader_epoch(TableIterableDataset("tar:" + pattern, type="sample")), 3),
                fastest(lambda: loader_epoch(wds.WebDataset(shards, shardshuffle=False, empty_check=False)), 3),
                "webdataset.WebDataset in torch's DataLoader", "< 1")

        wids = import_peer(peers, "wids", "wids")
        if wids:
            from tablio.torch import TableDataset
            order = list(range(count))
            random.Random(0).shuffle(order)
            order = order[:5000]
            cache = os.path.join(folder, "wids-cache")

            def tablio_random():
                dataset = TableDataset("tar:" + pattern, type="sample")
                for i in order:
                    dataset[i]

            def wids_random():
                shutil.rmtree(cache, ignore_errors=True)
                dataset = wids.ShardListDataset([{"url": s, "nsamples": PER_SHARD} for s in shards],
                                                cache_dir=cache, transformations=[])
                for i in order:
                    dataset[i]

            devnull = open(os.devnull, "w")
            stderr, sys.stderr = sys.stderr, devnull  # wids prints its shard list on every open
            try:
                theirs = fastest(wids_random, 3)
            finally:
                sys.stderr = stderr
            row("5,000 samples by index, shuffled", fastest(tablio_random, 3), theirs,
                "wids.ShardListDataset", "< 1")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
