#!/usr/bin/env python3
"""Kaldi features to TFRecord: each utterance's matrix becomes one tf.Example with the
features flattened ("feats", float), their shape ("shape", int64) and the utterance id
("utt", bytes), which TensorFlow's tf.io.parse_single_example reads back.

    feats_to_tfrecord.py RSPEC OUT.tfrecord [--gzip]
    feats_to_tfrecord.py "scp:data/train/feats.scp" train.tfrecord
    feats_to_tfrecord.py --demo FOLDER      # makes a small archive in FOLDER and converts it

With --gzip the file is GZIP-compressed as TFRecordOptions("GZIP") writes it.
"""

import argparse
import os
import sys

import numpy as np

import tablio


def convert(rspec, out, gzip=False):
    options = ",gz" if gzip else ""
    count = 0
    # key=utt: each Example keeps its key in the bytes feature "utt".
    with tablio.writer(f"tfrecord{options},key=utt:{out}", type="example") as records:
        for utt, feats in tablio.open(rspec, type="matrix"):
            records[utt] = {"feats": feats.reshape(-1), "shape": np.array(feats.shape, np.int64)}
            count += 1
    return count


def check(rspec, out):
    """Reads the TFRecord back, by key, and compares it with the source."""
    converted = tablio.open(f"tfrecord,key=utt:{out}", type="example")
    source = tablio.random_access(rspec, type="matrix")
    for utt, example in converted:
        feats = example["feats"].reshape(example["shape"])
        if not np.array_equal(feats, source[utt]):
            raise SystemExit(f"{utt}: the TFRecord differs from {rspec}")


def demo(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(0)
    with tablio.writer(f"ark,scp:{folder}/feats.ark,{folder}/feats.scp", type="matrix") as w:
        for i in range(20):
            w[f"spk1-utt{i:03d}"] = rng.standard_normal((50 + i, 40)).astype(np.float32)
    return f"scp:{folder}/feats.scp", f"{folder}/feats.tfrecord"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("rspec", nargs="?")
    parser.add_argument("out", nargs="?")
    parser.add_argument("--gzip", action="store_true")
    parser.add_argument("--demo", metavar="FOLDER")
    args = parser.parse_args()
    if args.demo:
        args.rspec, args.out = demo(args.demo)
    elif not args.out:
        parser.error("RSPEC and OUT.tfrecord are required")
    try:
        count = convert(args.rspec, args.out, args.gzip)
        check(args.rspec, args.out)
    except (tablio.FormatError, tablio.UsageError, OSError) as e:
        sys.exit(f"feats_to_tfrecord: {e}")
    print(f"{count} utterances from {args.rspec} to {args.out}, read back and checked")


if __name__ == "__main__":
    main()
