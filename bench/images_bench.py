#!/usr/bin/env python3
"""One PyTorch epoch over WebDataset shards of real-sized JPEGs (Fashion-MNIST's first 8,000
training images upscaled to 224x224, quality 90, in 8 tar shards) to uint8 batches of 64, in
one run: tablio's threads in the main process (num_workers=0) against DataLoader(num_workers=2)
with Pillow decoding in the workers (the tar members read by Python's tarfile, as webdataset
reads them, and by tablio), and against tablio decoding in two DataLoader workers. The batches
are checked equal. The floor: Pillow's decoding of every image, alone, split over two cores.
Ratios are time / the peer's time (lower is faster).

    bench/images_bench.py [--build build/bench]

Needs the Python package built with tablio::jpeg in <build>/python, python3-torch, python3-pil
and dataset-fashion-mnist.
"""

import gzip
import io
import os
import shutil
import tarfile
import tempfile
import time
import warnings
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from timing import fastest, package, row

FASHION = "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
IMAGES, SHARDS, BATCH, SIZE = 8000, 8, 64, 224


def decode_all(paths):
    """Pillow's decoding of every image of these shards, alone (the floor's half)."""
    from PIL import Image
    n = 0
    for path in paths:
        with tarfile.open(path) as tar:
            for member in tar:
                if member.name.endswith(".jpg"):
                    np.asarray(Image.open(tar.extractfile(member)).convert("RGB"))
                    n += 1
    return n


def main():
    args, tablio = package(__doc__, "bench")
    import torch
    from PIL import Image
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info

    import tablio.torch as tt

    torch.set_num_threads(1)
    # Pillow's arrays are read-only: torch warns once per worker, and the peer keeps its
    # zero-copy conversion.
    warnings.filterwarnings("ignore", "The given NumPy array is not writable")
    folder = tempfile.mkdtemp(prefix="tablio-imagesbench-")
    try:
        with gzip.open(FASHION) as f:
            pixels = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 28, 28)[:IMAGES]
        per = IMAGES // SHARDS
        shards = [os.path.join(folder, f"train-{s:06d}.tar") for s in range(SHARDS)]
        for s, path in enumerate(shards):
            with tablio.writer(f"tar:{path}", type="sample") as w:
                for i in range(s * per, (s + 1) * per):
                    big = Image.fromarray(pixels[i]).convert("RGB").resize((SIZE, SIZE), Image.BILINEAR)
                    data = io.BytesIO()
                    big.save(data, "JPEG", quality=90)
                    w[f"{i:06d}"] = {"jpg": data.getvalue(), "cls": str(i % 10).encode()}
        spec = "tar:" + os.path.join(folder, "train-{000000..%06d}.tar" % (SHARDS - 1))
        print(f"{IMAGES} JPEGs of {SIZE}x{SIZE}, {sum(os.path.getsize(p) for p in shards) / 1e6:.1f} MB in "
              f"{SHARDS} shards; batches of {BATCH}; 2 cores")

        class PillowShards(IterableDataset):
            """What webdataset does: tar members by tarfile, Pillow decoding, in the workers."""

            def __iter__(self):
                info = get_worker_info()
                mine = shards if info is None else shards[info.id::info.num_workers]
                for path in mine:
                    with tarfile.open(path) as tar:
                        sample = {}
                        for member in tar:
                            key, ext = member.name.split(".", 1)
                            sample[ext] = tar.extractfile(member).read()
                            if len(sample) == 2:
                                image = np.asarray(Image.open(io.BytesIO(sample["jpg"])).convert("RGB"))
                                yield torch.from_numpy(image), int(sample["cls"])
                                sample = {}

        class TablioBytesPillow(IterableDataset):
            """tablio reading the members, Pillow decoding them, in the workers."""

            def __iter__(self):
                info = get_worker_info()
                mine = shards if info is None else shards[info.id::info.num_workers]
                for path in mine:
                    for _, sample in tablio.open(f"tar:{path}", type="sample"):
                        image = np.asarray(Image.open(io.BytesIO(sample["jpg"])).convert("RGB"))
                        yield torch.from_numpy(image), int(sample["cls"])

        def epoch(loader, images_of):
            def run():
                n = 0
                for batch in loader:
                    images = images_of(batch)
                    assert images.dtype == torch.uint8 and images.shape[1:] == (SIZE, SIZE, 3)
                    n += len(images)
                assert n == IMAGES, n
            return run

        threads = tt.TableIterableDataset(spec, type="sample", batch_size=BATCH, images=True, threads=2)
        in_workers = tt.TableIterableDataset(spec, type="sample", batch_size=BATCH, images=True)
        loaders = {
            "tablio, 2 threads, no workers": (DataLoader(threads, batch_size=None, num_workers=0), lambda b: b["jpg"]),
            "tablio, 1 thread, no workers": (
                DataLoader(tt.TableIterableDataset(spec, type="sample", batch_size=BATCH, images=True),
                           batch_size=None, num_workers=0), lambda b: b["jpg"]),
            "tarfile + Pillow, 2 workers": (DataLoader(PillowShards(), batch_size=BATCH, num_workers=2),
                                            lambda b: b[0]),
            "tablio bytes + Pillow, 2 workers": (DataLoader(TablioBytesPillow(), batch_size=BATCH, num_workers=2),
                                                 lambda b: b[0]),
            "tablio images=, 2 workers": (DataLoader(in_workers, batch_size=None, num_workers=2),
                                          lambda b: b["jpg"]),
        }
        # The same pixels: tablio's first batch against Pillow's decoding of the same images.
        first = next(iter(DataLoader(tt.TableIterableDataset(spec, type="sample", batch_size=BATCH, images=True,
                                                             threads=2, with_keys=True),
                                     batch_size=None)))
        keys, batch = first
        for key, image in zip(keys[:8], batch["jpg"][:8]):
            shard = shards[int(key) // per]
            data = tablio.random_access(f"tar:{shard}", type="sample")[key]["jpg"]
            assert np.array_equal(image.numpy(), np.asarray(Image.open(io.BytesIO(data)).convert("RGB")))

        times = {name: fastest(epoch(loader, images_of), 3) for name, (loader, images_of) in loaders.items()}
        with ProcessPoolExecutor(2) as pool:
            list(pool.map(decode_all, [shards[:1], shards[1:2]]))  # started before the clock
            start = time.perf_counter()
            assert sum(pool.map(decode_all, [shards[0::2], shards[1::2]])) == IMAGES
            floor = time.perf_counter() - start
        ours = times["tablio, 2 threads, no workers"]
        print("epoch (lower is faster):")
        for name, seconds in times.items():
            print(f"  {name:<36} {seconds * 1e3:8.1f} ms")
        row("tablio 2 threads vs tarfile + Pillow, 2 workers", ours, times["tarfile + Pillow, 2 workers"],
            "DataLoader(num_workers=2), Pillow in workers", "<= 0.67x (1.5x faster)",
            floor=(floor, "Pillow decoding alone, 2 processes"))
        row("tablio 2 threads vs tablio bytes + Pillow", ours, times["tablio bytes + Pillow, 2 workers"],
            "DataLoader(num_workers=2), Pillow in workers", "<= 0.67x")
        row("tablio 2 threads vs tablio images= in 2 workers", ours, times["tablio images=, 2 workers"],
            "DataLoader(num_workers=2)", "report")
        row("tablio 2 threads vs 1 thread", ours, times["tablio, 1 thread, no workers"], "threads=None", "report")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
