#!/usr/bin/env python3
"""What a shuffle buffer costs under images=, in one run: a shuffled epoch (shuffle_buffer=1024,
batches of 64, threads=2, no workers) over ImageNet-like JPEGs (photos of 400-600 px, quality
90, in tar shards), the buffer holding the records undecoded (decoded once a batch picks them)
against holding each decoded output, for
- RandomResizedCrop(224) + flip to uint8 (150 KB an output),
- the same normalised to float32 (600 KB an output),
- whole images decoded (images=True, about 750 KB an output).
Each run is a process of its own: its peak RSS above what it had before the epoch is what the
buffer (and the batches in flight) cost. Ratios are records / outputs (lower is smaller, faster).

    bench/shuffle_buffer_bench.py [--build build/bench]

Needs the Python package built with tablio::jpeg in <build>/python, python3-torch and python3-pil.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

from timing import package
from transforms_bench import IMAGES, SHARDS, photo_shards

BATCH, BUFFER = 64, 1024

RUN = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
import tablio.torch as tt
spec, holds, images = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
ds = tt.TableIterableDataset(spec, type="sample", batch_size=%d, shuffle=True, shuffle_buffer=%d, seed=1,
                             threads=2, images=images)
ds._holds = holds
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start, n = time.perf_counter(), 0
for batch in ds:
    n += len(batch["cls"])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "rss": (peak - before) * 1024, "n": n}))
""" % (BATCH, BUFFER)


def main():
    args, tablio = package(__doc__, "bench")
    folder = tempfile.mkdtemp(prefix="tablio-shufflebench-")
    try:
        shards = photo_shards(tablio, folder)
        size = sum(os.path.getsize(p) for p in shards)
        spec = "tar:" + os.path.join(folder, "train-{000000..%06d}.tar" % (SHARDS - 1))
        print(f"{IMAGES} JPEGs of 400-600 px (quality 90), {size / IMAGES / 1e3:.0f} KB a record; shuffle_buffer="
              f"{BUFFER}, batches of {BATCH}, threads=2; 2 cores", flush=True)
        python = os.path.join(args.build, "python")
        forms = {
            "uint8 RandomResizedCrop(224) + flip": {"random_resized_crop": 224, "flip": 0.5},
            "float32 the same, normalised": {"random_resized_crop": 224, "flip": 0.5,
                                             "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]},
            "whole images (images=True)": True,
        }
        print("peak RSS above the start, and the epoch's time (records / outputs: lower is smaller, faster):")
        for name, images in forms.items():
            got = {}
            for holds in ("records", "outputs"):
                out = subprocess.run([sys.executable, "-c", RUN, python, spec, holds, json.dumps(images)],
                                     capture_output=True, text=True, check=True)
                got[holds] = json.loads(out.stdout.strip().splitlines()[-1])
                assert got[holds]["n"] == IMAGES, got[holds]
            r, o = got["records"], got["outputs"]
            print(f"  {name:<38} records {r['rss'] / 2**20:7.0f} MiB {r['seconds'] * 1e3:8.0f} ms   outputs "
                  f"{o['rss'] / 2**20:7.0f} MiB {o['seconds'] * 1e3:8.0f} ms   memory {r['rss'] / o['rss']:5.2f}x  "
                  f"time {r['seconds'] / o['seconds']:5.2f}x", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
