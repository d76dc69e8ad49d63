#!/usr/bin/env python3
"""The Python package against numpy, the Python peers and C++ tablio, in one run.

    bench/python_bench.py [--build build/bench]

Needs the package built (PYTHONPATH=<build>/python, or installed), bench/read_table built in
<build> (cmake -DTABLIO_BUILD_BENCHMARKS=ON -DTABLIO_BUILD_PYTHON=ON), python3-lmdb,
python3-protobuf, protoc and Debian's dataset-fashion-mnist. Makes its inputs in a scratch
folder: 1000 float matrices of 500x80 (a 160 MB archive, as bench/kaldi_tables.cpp), their
CM method-1 and text forms, and Fashion-MNIST's 60,000 training images as LMDB of Datum,
TFRecord of Examples (as examples/convert_mnist writes them) and IDX. Each figure is the
fastest of several passes; ratios are time / the comparison's time (lower is faster).
"""

import gzip
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import threading

import numpy as np

from timing import ROOT, fastest, package, row

FASHION = "/usr/share/datasets/fashion-mnist"


def cxx_seconds(build, type_, rspec, keys_file=None):
    command = [os.path.join(build, "bench", "read_table"), type_, rspec] + ([keys_file] if keys_file else [])
    return float(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


# ---- the peers: what a Python user does today

def peer_protobuf_modules(folder):
    peer = os.path.join(ROOT, "tests", "peer")
    subprocess.run(["protoc", f"-I{peer}", f"--python_out={folder}", os.path.join(peer, "tf_example.proto"),
                    os.path.join(peer, "caffe_datum.proto")], check=True)
    sys.path.insert(0, folder)
    import caffe_datum_pb2
    import tf_example_pb2
    return caffe_datum_pb2, tf_example_pb2


def peer_lmdb_scan(lmdb, caffe_pb2, path):
    out = 0
    with lmdb.open(path, readonly=True, lock=False) as env, env.begin() as txn:
        datum = caffe_pb2.Datum()
        for key, value in txn.cursor():
            datum.ParseFromString(value)
            image = np.frombuffer(datum.data, np.uint8).reshape(datum.channels, datum.height, datum.width)
            out += datum.label + image.shape[0]
    return out


def peer_tfrecord_parse(example_pb2, path):
    """TFRecord framing in Python (length, then payload; CRCs skipped) + protobuf's parse."""
    n = 0
    with open(path, "rb") as f:
        data = f.read()
    at, end = 0, len(data)
    unpack = struct.unpack_from
    while at < end:
        (length,) = unpack("<Q", data, at)
        example = example_pb2.Example()
        example.ParseFromString(data[at + 12:at + 12 + length])
        at += 16 + length
        n += 1
    return n


def numpy_idx(path):
    with open(path, "rb") as f:
        raw = f.read()
    return np.frombuffer(raw, np.uint8, offset=16).reshape(-1, 28, 28)


# ---- inputs

def make_inputs(tablio, folder):
    rng = np.random.default_rng(7)
    matrices = [(f"utt{i:05d}", (rng.standard_normal((500, 80)) * 3).astype(np.float32)) for i in range(1000)]
    with tablio.writer(f"ark,scp:{folder}/feats.ark,{folder}/feats.scp") as plain, \
         tablio.writer(f"ark:{folder}/cm1.ark", compression_method=1) as cm, \
         tablio.writer(f"ark,t:{folder}/text.ark") as text:
        for i, (key, m) in enumerate(matrices):
            plain[key] = m
            cm[key] = m
            if i < 100:
                text[key] = m
    keys = [k for k, _ in matrices]
    random.Random(3).shuffle(keys)
    with open(f"{folder}/keys.txt", "w") as f:
        f.write("\n".join(keys) + "\n")

    images = tablio.idx.read(f"{FASHION}/train-images-idx3-ubyte.gz")
    labels = tablio.idx.read(f"{FASHION}/train-labels-idx1-ubyte.gz")
    with open(f"{folder}/images-idx3-ubyte", "wb") as out, gzip.open(f"{FASHION}/train-images-idx3-ubyte.gz") as src:
        shutil.copyfileobj(src, out)
    with tablio.writer(f"lmdb:{folder}/train_lmdb", type="datum") as lmdb_out, \
         tablio.writer(f"tfrecord:{folder}/train.tfrecord", type="example") as records:
        for i in range(len(images)):
            image, label = images[i], int(labels[i])
            lmdb_out[f"{i:08d}"] = (image.reshape(1, 28, 28), label)
            records[f"{i:08d}"] = {"height": np.array([28]), "width": np.array([28]), "depth": np.array([1]),
                                   "label": np.array([label]), "image_raw": [image.tobytes()]}


def main():
    args, tablio = package(__doc__, "bench")
    import lmdb

    folder = tempfile.mkdtemp(prefix="tablio-pybench-")
    try:
        caffe_pb2, example_pb2 = peer_protobuf_modules(folder)
        make_inputs(tablio, folder)

        def each(rspec, type_="matrix"):
            def run():
                for _ in tablio.open(rspec, type=type_):
                    pass
            return run

        def batched(rspec, type_, n=256):
            def run():
                for _ in tablio.open(rspec, type=type_).batches(n):
                    pass
            return run

        ark = f"{folder}/feats.ark"
        row("binary ark, per record", fastest(each(f"ark:{ark}")),
            fastest(lambda: np.fromfile(ark, np.uint8)), "numpy.fromfile of the archive", "<= 0.7x")
        row("CM method-1 ark, per record", fastest(each(f"ark:{folder}/cm1.ark")),
            cxx_seconds(args.build, "matrix", f"ark:{folder}/cm1.ark"), "C++ tablio", "<= 1.3x")
        row("text ark (100 matrices), per record", fastest(each(f"ark:{folder}/text.ark"), 3),
            cxx_seconds(args.build, "matrix", f"ark:{folder}/text.ark"), "C++ tablio", "<= 1.3x")

        db = f"{folder}/train_lmdb"
        peer = fastest(lambda: peer_lmdb_scan(lmdb, caffe_pb2, db))
        row("Caffe LMDB, per record", fastest(each(f"lmdb:{db}", "datum")), peer,
            "python3-lmdb + protobuf Datum + numpy.frombuffer", "<= 0.5x")
        row("Caffe LMDB, batches(256)", fastest(batched(f"lmdb:{db}", "datum")), peer, "the same", "<= 0.1x")

        records = f"{folder}/train.tfrecord"
        peer = fastest(lambda: peer_tfrecord_parse(example_pb2, records), 3)
        row("TFRecord of Examples to dicts, per record", fastest(each(f"tfrecord:{records}", "example"), 3), peer,
            "Python TFRecord framing + protobuf parse", "<= 0.33x")
        row("TFRecord of Examples, batches(256)", fastest(batched(f"tfrecord:{records}", "example")), peer,
            "the same", "<= 0.1x")

        idx = f"{folder}/images-idx3-ubyte"
        row("IDX images to ndarray", fastest(lambda: np.asarray(tablio.idx.read(idx)).sum(dtype=np.uint64)),
            fastest(lambda: numpy_idx(idx).sum(dtype=np.uint64)), "numpy.frombuffer over the file (+ a sum each)",
            "<= 1.1x")

        keys = open(f"{folder}/keys.txt").read().split()
        scp = f"scp:{folder}/feats.scp"

        def lookups():
            table = tablio.random_access(scp)
            for key in keys:
                table[key]
        row("random access, 1000 shuffled keys via scp", fastest(lookups),
            cxx_seconds(args.build, "matrix", scp, f"{folder}/keys.txt"), "C++ tablio", "<= 1.5x")

        # Threads overlap: the GIL is released while a table reads. Four threads, each reading
        # its own text archive (CPU-bound parsing), against one thread reading one: with N
        # cores, 4 / min(4, N) of it is the limit (2x on 2 cores), 4x would mean no overlap.
        def threads(n):
            def run():
                workers = [threading.Thread(target=each(f"ark:{folder}/text.ark")) for _ in range(n)]
                for w in workers:
                    w.start()
                for w in workers:
                    w.join()
            return run
        row("4 threads reading text archives", fastest(threads(4), 3), fastest(threads(1), 3),
            f"1 thread reading one; limit {4 / min(4, os.cpu_count()):.1f}x", "< 4x (no overlap)")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
