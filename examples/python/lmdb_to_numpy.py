#!/usr/bin/env python3
"""A Caffe LMDB of Datum (as convert_mnist_data and convert_imageset write it) to numpy:
every image stacked into one (N, channels, height, width) uint8 array and the labels into an
(N,) array, read in batches without the GIL, then saved as an .npz file.

    lmdb_to_numpy.py DB_FOLDER OUT.npz
    lmdb_to_numpy.py --demo FOLDER     # converts Fashion-MNIST to LMDB first (needs
                                       # Debian's dataset-fashion-mnist)
"""

import argparse
import os
import sys

import numpy as np

import tablio

FASHION = "/usr/share/datasets/fashion-mnist"


def load(db):
    images, labels = [], []
    for keys, (batch_images, batch_labels) in tablio.open(f"lmdb:{db}", type="datum").batches(4096):
        if isinstance(batch_images, list):
            raise SystemExit(f"{db}: images of different shapes or encoded images cannot be stacked")
        images.append(batch_images)
        labels.append(batch_labels)
    return np.concatenate(images), np.concatenate(labels)


def demo(folder, count=5000):
    """Fashion-MNIST's first training images as Caffe's convert_mnist_data stores them."""
    os.makedirs(folder, exist_ok=True)
    images = tablio.idx.read(f"{FASHION}/train-images-idx3-ubyte.gz")[:count]
    labels = tablio.idx.read(f"{FASHION}/train-labels-idx1-ubyte.gz")[:count]
    db = f"{folder}/fashion_lmdb"
    with tablio.writer(f"lmdb:{db}", type="datum") as w:
        for i, (image, label) in enumerate(zip(images, labels)):
            w[f"{i:08d}"] = (image[np.newaxis], int(label))
    return db, f"{folder}/fashion.npz", (images, labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("db", nargs="?")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--demo", metavar="FOLDER")
    args = parser.parse_args()
    source = None
    if args.demo:
        args.db, args.out, source = demo(args.demo)
    elif not args.out:
        parser.error("DB_FOLDER and OUT.npz are required")
    try:
        images, labels = load(args.db)
    except (tablio.FormatError, tablio.UsageError, OSError) as e:
        sys.exit(f"lmdb_to_numpy: {e}")
    if source is not None:
        assert np.array_equal(images[:, 0], source[0]) and np.array_equal(labels, source[1])
    np.savez(args.out, images=images, labels=labels)
    print(f"{len(labels)} images of {images.shape[1:]} from {args.db} to {args.out}")


if __name__ == "__main__":
    main()
