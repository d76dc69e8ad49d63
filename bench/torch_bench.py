#!/usr/bin/env python3
"""One epoch of Fashion-MNIST's 60,000 training images as float tensors (256, 1, 28, 28) and
labels, through PyTorch's DataLoader with num_workers 0 and 2: tablio's datasets against
torchvision's FashionMNIST and against datasets over python3-lmdb + protobuf and a Python
TFRecord reader, in one run. Ratios are time / the peer's time (lower is faster).

    bench/torch_bench.py [--build build/bench]

Needs the Python package built in <build>/python (or installed), python3-torch,
python3-torchvision, python3-lmdb, python3-protobuf, protoc and dataset-fashion-mnist.
"""

import gzip
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

from timing import ROOT, fastest, package
FASHION = "/usr/share/datasets/fashion-mnist"
BATCH = 256


def epoch_seconds(loader, passes=2):
    def epoch():
        n = 0
        for images, labels in loader:
            assert images.dtype.is_floating_point
            n += len(labels)
        assert n == 60000, n
    return fastest(epoch, passes)


def main():
    args, tablio = package(__doc__, "bench")
    import lmdb
    import torch
    import torchvision
    from torch.utils.data import DataLoader, Dataset, IterableDataset, get_worker_info

    import tablio.torch as tt

    torch.set_num_threads(1)
    folder = tempfile.mkdtemp(prefix="tablio-torchbench-")
    try:
        peer = os.path.join(ROOT, "tests", "peer")
        subprocess.run(["protoc", f"-I{peer}", f"--python_out={folder}", os.path.join(peer, "tf_example.proto"),
                        os.path.join(peer, "caffe_datum.proto")], check=True)
        sys.path.insert(0, folder)
        import caffe_datum_pb2
        import tf_example_pb2

        # Inputs: IDX for torchvision and tablio, LMDB of Datum, 8 TFRecord shards of Examples.
        raw = os.path.join(folder, "FashionMNIST", "raw")
        os.makedirs(raw)
        for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                     "t10k-labels-idx1-ubyte"):
            with gzip.open(f"{FASHION}/{name}.gz") as src, open(os.path.join(raw, name), "wb") as out:
                shutil.copyfileobj(src, out)
        images = tablio.idx.read(os.path.join(raw, "train-images-idx3-ubyte"))
        labels = tablio.idx.read(os.path.join(raw, "train-labels-idx1-ubyte"))
        with tablio.writer(f"lmdb:{folder}/lmdb", type="datum") as w, \
             tablio.writer(f"tfrecord:{folder}/all.tfrecord", type="example") as t:
            for i in range(len(labels)):
                w[f"{i:08d}"] = (images[i][np.newaxis], int(labels[i]))
                t[f"{i:08d}"] = {"label": np.array([labels[i]]), "image_raw": [images[i].tobytes()]}
        tablio.shard(f"tfrecord:{folder}/all.tfrecord", f"tfrecord:{folder}/train.tfrecord", 8)

        class IdxImages(Dataset):  # tablio's IDX view, per sample
            def __init__(self):
                self.images = tablio.idx.read(os.path.join(raw, "train-images-idx3-ubyte"))
                self.labels = tablio.idx.read(os.path.join(raw, "train-labels-idx1-ubyte"))

            def __len__(self):
                return len(self.labels)

            def __getitem__(self, i):  # ToTensor's x / 255 in float32, by numpy from the mapped file
                image = np.divide(self.images[i], 255, dtype=np.float32)
                return torch.from_numpy(image[np.newaxis]), int(self.labels[i])

        class LmdbPeer(Dataset):  # the seed's way: python3-lmdb + protobuf Datum, per sample
            def __init__(self, path):
                self.path, self.env = path, None
                with lmdb.open(path, readonly=True, lock=False) as env, env.begin() as txn:
                    self.keys = [k for k, _ in txn.cursor()]

            def __len__(self):
                return len(self.keys)

            def __getitem__(self, i):
                if self.env is None:
                    self.env = lmdb.open(self.path, readonly=True, lock=False)
                with self.env.begin() as txn:
                    d = caffe_datum_pb2.Datum()
                    d.ParseFromString(txn.get(self.keys[i]))
                image = np.frombuffer(d.data, np.uint8).reshape(d.channels, d.height, d.width)
                return torch.from_numpy(image.copy()).float().div(255), d.label

        class TFRecordPeer(IterableDataset):  # Python TFRecord framing + protobuf, by shard
            def __iter__(self):
                info = get_worker_info()
                files = sorted(f for f in os.listdir(folder) if f.startswith("train-") and f.endswith(".tfrecord"))
                if info:
                    files = files[info.id::info.num_workers]
                for name in files:
                    with open(os.path.join(folder, name), "rb") as f:
                        data = f.read()
                    at = 0
                    while at < len(data):
                        (length,) = struct.unpack_from("<Q", data, at)
                        e = tf_example_pb2.Example()
                        e.ParseFromString(data[at + 12:at + 12 + length])
                        at += 16 + length
                        feature = e.features.feature
                        image = np.frombuffer(feature["image_raw"].bytes_list.value[0], np.uint8).reshape(1, 28, 28)
                        yield torch.from_numpy(image.copy()).float().div(255), feature["label"].int64_list.value[0]

        # Images as float, scaled by 1/255 in C++ as they are read: a Datum's (Caffe's
        # transform_param scale), an Example's image_raw bytes decoded as 28x28 uint8 (TensorFlow's
        # decode_raw) and scaled.
        # What a training job reads of each Example (a feature description, as for tf.data):
        # the image, as float pixels / 255, and the label.
        as_image = {"features": ["image_raw", "label"], "decode_raw": {"image_raw": (np.uint8, (28, 28))},
                    "scale": 1 / 255}
        tfrecord_shards = f"tfrecord:{folder}/train-*-of-00008.tfrecord"
        tfrecord_per_sample = tt.TableIterableDataset(tfrecord_shards, type="example", uneven="allow", **as_image,
                                                      transform=lambda e: (e["image_raw"], e["label"].item()))

        class BatchedTFRecord(IterableDataset):
            def __init__(self):
                self.ds = tt.TableIterableDataset(tfrecord_shards, type="example", batch_size=BATCH, uneven="allow",
                                                  **as_image)

            def __iter__(self):
                for batch in self.ds:
                    yield batch["image_raw"], batch["label"][:, 0]

        batched_lmdb = tt.TableIterableDataset(f"lmdb:{folder}/lmdb", type="datum", batch_size=BATCH,
                                               uneven="allow", scale=1 / 255)
        lmdb_per_sample = tt.TableDataset(f"lmdb:{folder}/lmdb", type="datum", scale=1 / 255)

        class ReadyBatches(IterableDataset):  # reads nothing: what DataLoader itself costs per batch
            def __iter__(self):
                info = get_worker_info()
                part = range(info.id, 60000, info.num_workers) if info else range(60000)
                for start in range(0, len(part), BATCH):
                    n = len(part[start:start + BATCH])
                    yield torch.zeros((n, 1, 28, 28)), torch.zeros(n, dtype=torch.int64)

        class ReadySamples(Dataset):  # reads nothing: what DataLoader itself costs per sample
            image = torch.zeros((1, 28, 28))

            def __len__(self):
                return 60000

            def __getitem__(self, i):
                return self.image.clone(), 0

        vision = torchvision.datasets.FashionMNIST(folder, train=True, transform=torchvision.transforms.ToTensor())
        for workers in (0, 2):
            def loader(dataset, batched=False):
                if batched:
                    return DataLoader(dataset, batch_size=None, num_workers=workers)
                return DataLoader(dataset, batch_size=BATCH, num_workers=workers)

            print(f"num_workers={workers}", flush=True)
            rows = [
                ("IDX, per sample", IdxImages(), False, "torchvision FashionMNIST + ToTensor()", vision, False,
                 "<= 0.5x"),
                ("Caffe LMDB, per sample", lmdb_per_sample, False, "python3-lmdb + protobuf Datum",
                 LmdbPeer(f"{folder}/lmdb"), False, "<= 0.67x"),
                ("Caffe LMDB, batched", batched_lmdb, True, "python3-lmdb + protobuf Datum",
                 LmdbPeer(f"{folder}/lmdb"), False, "<= 0.1x"),
                ("TFRecord shards, per sample", tfrecord_per_sample, False, "Python TFRecord + protobuf",
                 TFRecordPeer(), False, "<= 0.5x"),
                ("TFRecord shards, batched", BatchedTFRecord(), True, "Python TFRecord + protobuf",
                 TFRecordPeer(), False, "<= 0.1x"),
            ]
            for name, ours, ours_batched, against, theirs, theirs_batched, target in rows:
                a = epoch_seconds(loader(ours, ours_batched))
                b = epoch_seconds(loader(theirs, theirs_batched))
                print(f"  {name:<30} {a:7.3f} s  vs {b:7.3f} s  {a / b:5.2f}x  ({against}; target {target})",
                      flush=True)
            floor = epoch_seconds(loader(ReadySamples()))
            print(f"  {'ready samples, nothing read':<30} {floor:7.3f} s  (DataLoader's own cost of an epoch's "
                  "samples: a floor for every per-sample dataset)", flush=True)
            floor = epoch_seconds(loader(ReadyBatches(), True))
            print(f"  {'ready batches, nothing read':<30} {floor:7.3f} s  (DataLoader's own cost of an epoch's "
                  "batches: a floor for every dataset)", flush=True)
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
