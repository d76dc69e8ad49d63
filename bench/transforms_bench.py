#!/usr/bin/env python3
"""Training transforms in the table's threads, in one run: an epoch over ImageNet-like JPEGs
(photos of 400-600 px, quality 90, in tar shards and in an LMDB of encoded Datums) to batches
of 64, with
- torchvision's train transform (RandomResizedCrop(224) + RandomHorizontalFlip) and its eval
  transform (Resize(256) + CenterCrop(224)), to uint8 (N, 3, 224, 224): tablio with threads=2
  and no workers, against DataLoader(num_workers=2) with torchvision on Pillow in the workers,
  and with torchvision.io.decode_jpeg and torchvision's tensor transforms in the workers;
- Caffe's transform_param { crop_size: 227 mirror: true mean_value } over the Datums: tablio's
  transform against the same transform in numpy after tablio's decoding (threads=2 both).
The floor: the same epoch in one thread, halved (its work split evenly over the two cores);
and, beside it, libjpeg-turbo decoding every image whole, alone, over two cores (tablio's
decoder, no transform). Ratios are time / the peer's time (lower is faster).

    bench/transforms_bench.py [--build build/bench]

Needs the Python package built with tablio::jpeg in <build>/python, python3-torch,
python3-torchvision and python3-pil.
"""

import io
import os
import shutil
import tempfile
import warnings

import numpy as np

from timing import fastest, package, row

IMAGES, SHARDS, BATCH = 2000, 8, 64
MEAN = [104.0, 117.0, 123.0]


def photo(rng, i):
    """A photo-like image: smooth shapes and gradients, a little noise, 400-600 px a side."""
    h, w = int(rng.integers(400, 601)), int(rng.integers(400, 601))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(50, 250)
    disc = ((xx - cx) ** 2 + (yy - cy) ** 2 < r * r)[..., None]
    base = np.stack([xx / w * 255, yy / h * 255, (xx + yy) / (w + h) * 255], -1)
    colour = rng.uniform(0, 255, 3)
    a = np.where(disc, colour, base) + rng.normal(0, 6, (h, w, 3))
    return a.clip(0, 255).astype(np.uint8)


def photo_shards(tablio, folder, datums=None):
    """IMAGES photos in SHARDS tar shards of samples (jpg, cls) in `folder`, and as encoded
    Datums written to `datums` when given: the shards' paths."""
    from PIL import Image

    rng = np.random.default_rng(0)
    per = IMAGES // SHARDS
    shards = [os.path.join(folder, f"train-{s:06d}.tar") for s in range(SHARDS)]
    for s, path in enumerate(shards):
        with tablio.writer(f"tar:{path}", type="sample") as w:
            for i in range(s * per, (s + 1) * per):
                data = io.BytesIO()
                Image.fromarray(photo(rng, i)).save(data, "JPEG", quality=90)
                w[f"{i:06d}"] = {"jpg": data.getvalue(), "cls": str(i % 1000).encode()}
                if datums is not None:
                    datums[f"{i:08d}"] = (data.getvalue(), i % 1000)
    return shards


def main():
    args, tablio = package(__doc__, "bench")
    import torch
    import torchvision.transforms as T
    from PIL import Image
    from torch.utils.data import DataLoader, IterableDataset, get_worker_info
    from torchvision.io import decode_jpeg

    import tablio.torch as tt

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", "The given NumPy array is not writable")
    warnings.filterwarnings("ignore", ".*antialias.*")
    folder = tempfile.mkdtemp(prefix="tablio-transformsbench-")
    try:
        with tablio.writer(f"lmdb:{folder}/train_lmdb", type="datum") as datums:
            shards = photo_shards(tablio, folder, datums)
        images = IMAGES // SHARDS * SHARDS
        spec = "tar:" + os.path.join(folder, "train-{000000..%06d}.tar" % (SHARDS - 1))
        size = sum(os.path.getsize(p) for p in shards)
        print(f"{images} JPEGs of 400-600 px (quality 90), {size / 1e6:.1f} MB in {SHARDS} shards and an LMDB; "
              f"batches of {BATCH}; 2 cores", flush=True)

        class Workers(IterableDataset):
            """Shards read by tablio in the workers, each image decoded and transformed there."""

            def __init__(self, transform):
                self.transform = transform

            def __iter__(self):
                info = get_worker_info()
                for path in shards[info.id::info.num_workers]:
                    for _, sample in tablio.open(f"tar:{path}", type="sample"):
                        yield self.transform(sample["jpg"]), int(sample["cls"])

        def on_pillow(transform):
            return lambda data: transform(Image.open(io.BytesIO(data)).convert("RGB"))

        def on_decode_jpeg(transform):
            return lambda data: transform(decode_jpeg(torch.frombuffer(bytearray(data), dtype=torch.uint8)))

        def epoch(loader, images_of):
            def run():
                n = 0
                for batch in loader:
                    pixels = images_of(batch)
                    assert pixels.dtype == torch.uint8 and pixels.shape[1:] == (3, 224, 224), pixels.shape
                    n += len(pixels)
                assert n == images, n
            return run

        train_pil = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.PILToTensor()])
        eval_pil = T.Compose([T.Resize(256), T.CenterCrop(224), T.PILToTensor()])
        train_tensor = T.Compose([T.RandomResizedCrop(224, antialias=True), T.RandomHorizontalFlip()])
        eval_tensor = T.Compose([T.Resize(256, antialias=True), T.CenterCrop(224)])
        runs = {}
        for phase, images_option, pil, tensor in [
                ("train", {"random_resized_crop": 224, "flip": 0.5}, train_pil, train_tensor),
                ("eval", {"resize": 256, "center_crop": 224}, eval_pil, eval_tensor)]:
            def dataset(threads):
                return tt.TableIterableDataset(spec, type="sample", batch_size=BATCH, images=images_option,
                                               threads=threads, decode=True)
            loaders = {
                "tablio, 2 threads": (DataLoader(dataset(2), batch_size=None), lambda b: b["jpg"]),
                "tablio, 1 thread": (DataLoader(dataset(1), batch_size=None), lambda b: b["jpg"]),
                "Pillow + torchvision, 2 workers": (
                    DataLoader(Workers(on_pillow(pil)), batch_size=BATCH, num_workers=2), lambda b: b[0]),
                "decode_jpeg + torchvision, 2 workers": (
                    DataLoader(Workers(on_decode_jpeg(tensor)), batch_size=BATCH, num_workers=2), lambda b: b[0]),
            }
            runs[phase] = {name: fastest(epoch(*loader), 3) for name, loader in loaders.items()}

        # Caffe: crop_size 227, mirror, mean_value, in the threads, against numpy after decoding.
        caffe = {"crop_size": 227, "mirror": True, "mean_value": MEAN}
        numpy_rng = np.random.default_rng(1)

        def caffe_tablio():
            n = 0
            with tablio.open(f"lmdb:{folder}/train_lmdb", type="datum", images=caffe, threads=2) as t:
                for _, (values, _) in t.batches(BATCH):
                    assert values.shape[1:] == (3, 227, 227) and values.dtype == np.float32
                    n += len(values)
            assert n == images

        def caffe_numpy():
            n = 0
            mean = np.array(MEAN, np.float32)[:, None, None]
            with tablio.open(f"lmdb:{folder}/train_lmdb", type="datum", images=True, threads=2) as t:
                for _, (pixels, _) in t.batches(BATCH):
                    out = np.empty((len(pixels), 3, 227, 227), np.float32)
                    for i, chw in enumerate(pixels):
                        h, w = chw.shape[1:]
                        top, left = numpy_rng.integers(0, h - 226), numpy_rng.integers(0, w - 226)
                        crop = chw[:, top:top + 227, left:left + 227].astype(np.float32) - mean
                        out[i] = crop[:, :, ::-1] if numpy_rng.integers(0, 2) else crop
                    n += len(out)
            assert n == images

        caffe_ours, caffe_theirs = fastest(caffe_tablio, 3), fastest(caffe_numpy, 3)

        def decode_whole():
            with tablio.open(spec, type="sample", images=True, threads=2) as t:
                for _ in t:
                    pass
        floor = fastest(decode_whole, 3)

        print("epoch (lower is faster):")
        for phase, times in runs.items():
            for name, seconds in times.items():
                print(f"  {phase:<6} {name:<40} {seconds * 1e3:8.1f} ms  {images / seconds:7.0f} images/s")
        print(f"  caffe  tablio crop_size 227 + mirror + mean  {caffe_ours * 1e3:8.1f} ms  {images / caffe_ours:7.0f} "
              f"images/s\n  caffe  numpy after tablio's decoding        {caffe_theirs * 1e3:8.1f} ms  "
              f"{images / caffe_theirs:7.0f} images/s")
        for phase in runs:
            ours = runs[phase]["tablio, 2 threads"]
            row(f"{phase}: tablio 2 threads vs Pillow, 2 workers", ours, runs[phase]["Pillow + torchvision, 2 workers"],
                "DataLoader(num_workers=2), torchvision on Pillow", "<= 0.33x (3x faster)",
                floor=(runs[phase]["tablio, 1 thread"] / 2, "the same epoch in one thread, halved: "
                       "its work split evenly over the 2 cores"))
            print(f"  {'':<44} whole images decoded alone, 2 threads {floor * 1e3:.1f} ms; ours / that "
                  f"{ours / floor:.2f}x", flush=True)
            row(f"{phase}: tablio 2 threads vs decode_jpeg, 2 workers", ours,
                runs[phase]["decode_jpeg + torchvision, 2 workers"],
                "DataLoader(num_workers=2), torchvision.io.decode_jpeg", "<= 0.67x (1.5x faster)")
        row("caffe: tablio transform vs numpy after decoding", caffe_ours, caffe_theirs,
            "the same transform in numpy, threads=2 decoding", "report")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
