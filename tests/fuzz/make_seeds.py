#!/usr/bin/python3
"""Seed corpora for the fuzz targets, from tests/data: each target's input layout (its leading
selector bytes, single records rather than whole files) so that fuzzing starts from real data.

    make_seeds.py DATA_DIR OUT_DIR
"""
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

data, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])


def files(*folders):
    for folder in folders:
        for f in sorted((data / folder).iterdir()):
            if f.is_file() and not f.name.endswith(".expect"):
                yield f


def put(target, name, content):
    folder = out / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(content)


def tfrecord_records(content):
    at = 0
    while at + 12 <= len(content):
        (length,) = struct.unpack_from("<Q", content, at)
        if at + 16 + length > len(content):
            return
        yield content[at + 12 : at + 12 + length]
        at += 16 + length


HOLDERS = 17  # fuzz_holders.hpp's choices
for f in files("kaldi/holders", "kaldi/compressed", "kaldi/bad"):
    content = f.read_bytes()
    obj = content.split(b" ", 1)[1] if b" " in content else content
    for choice in range(HOLDERS):
        put("fuzz_kaldi_archive", f"{f.name}.{choice}", bytes([choice, 0]) + content)
        if choice in (0, 1, 4):  # the matrix holders, whose objects threads decode apart
            put("fuzz_threads", f"{f.name}.{choice}", bytes([choice, 7 + choice, choice % 2]) + content)
        put("fuzz_kaldi_object", f"{f.name}.{choice}", bytes([choice, choice % 8]) + obj)
for f in files("kaldi/scp/wav"):
    for mode in (0, 1, 7):
        put("fuzz_wave", f"{f.name}.{mode}", bytes([mode]) + f.read_bytes())
for f in files("kaldi/scp", "kaldi/bad"):
    if f.suffix == ".scp":
        for n, line in enumerate(f.read_bytes().splitlines()):
            put("fuzz_script", f"{f.name}.{n}", bytes([20, 13]) + line)
            put("fuzz_specifier", f"{f.name}.{n}", line)
for spec in (b"ark,scp,t:a.ark,a.scp", b"scp,p,o,s,cs:f.scp", b"tfrecord,key=utt,shard=1/4:train@8",
             b"lmdb,shard=0/2:db", b"idx,p:train-images-idx3-ubyte.gz", b"ark:gunzip -c f.gz |"):
    put("fuzz_specifier", spec.hex(), spec)
for f in files("tfrecord/generated", "tfrecord/corrupt"):
    content = f.read_bytes()
    for selector in (0, 1, 3, 4 * 3):
        put("fuzz_tfrecord", f"{f.name}.{selector}", bytes([selector]) + content)
    for n, record in enumerate(tfrecord_records(content)):
        put("fuzz_example", f"{f.name}.{n}", record)
        put("fuzz_protobuf", f"{f.name}.{n}", record)  # messages of another type: unknown fields
for f in files("tar"):
    if f.suffix == ".tar":
        for mode in (0, 1, 7):
            put("fuzz_tar", f"{f.name}.{mode}", bytes([mode]) + f.read_bytes())
for f in files("idx/types", "idx/bad"):
    put("fuzz_idx", f.name, f.read_bytes())
# Dumped from a copy: opening the database writes a lock file beside it.
with tempfile.TemporaryDirectory() as copy:
    shutil.copy(data / "caffe/fashion_t10k_1000_lmdb/data.mdb", copy)
    dump = subprocess.run(["mdb_dump", copy], capture_output=True, check=True)
values = [l[1:] for l in dump.stdout.decode().splitlines() if l.startswith(" ")][1::2]
for n, value in enumerate(values[:50]):
    put("fuzz_datum", str(n), bytes.fromhex(value))
    put("fuzz_protobuf", f"datum.{n}", bytes.fromhex(value))
for n, floats in enumerate(([0.0, 1.5, -2.0, 3.25], [float("nan"), 1.0, float("inf"), -1.0] * 4)):
    for method in range(7):
        put("fuzz_compressed_matrix", f"{n}.{method}", bytes([method, 1]) + struct.pack(f"<{len(floats)}f", *floats))


def lmdb_seeds():
    """Small databases python3-lmdb writes (liblmdb underneath): each a tree of another shape."""
    import lmdb

    def write(name, fill, **options):
        with tempfile.TemporaryDirectory() as folder:
            with lmdb.open(folder, map_size=1 << 24, **options) as env:
                fill(env)
            put("fuzz_lmdb", name, (pathlib.Path(folder) / "data.mdb").read_bytes())

    def puts(records):
        def fill(env):
            with env.begin(write=True) as txn:
                for key, value in records:
                    txn.put(key, value)
        return fill

    def deleted(env):
        puts([(b"%08d" % i, b"v" * (i % 50)) for i in range(400)])(env)
        with env.begin(write=True) as txn:
            for i in range(0, 400, 2):
                txn.delete(b"%08d" % i)

    def named(env):
        sub = env.open_db(b"sub", dupsort=True)
        with env.begin(write=True) as txn:
            txn.put(b"a", b"main")
            txn.put(b"x", b"1", db=sub)
            txn.put(b"x", b"2", db=sub)

    write("empty", lambda env: None)
    write("one-leaf", puts([(b"%08d" % i, b"value %d" % i) for i in range(30)]))
    write("overflow", puts([(b"%08d" % i, bytes([i]) * n) for i, n in enumerate((0, 4079, 4081, 9000, 20000))]))
    write("depth-3", puts([(b"%04d" % i + b"k" * 446, b"") for i in range(120)]))
    write("deleted", deleted)
    write("named", named, max_dbs=2)


lmdb_seeds()
put("fuzz_lmdb", "float_encoded", (data / "caffe/float_encoded_lmdb/data.mdb").read_bytes())
# Mean files as compute_image_mean writes them: the legacy shape, the values packed.
for n, (c, h, w) in enumerate([(3, 4, 5), (1, 2, 2), (3, 1, 1)]):
    shape = b"".join(bytes([field << 3]) + bytes([d]) for field, d in zip((1, 2, 3, 4), (1, c, h, w)))
    values = struct.pack(f"<{c * h * w}f", *(i * 0.5 for i in range(c * h * w)))
    size = bytes([len(values) & 0x7F | 0x80, len(values) >> 7]) if len(values) > 127 else bytes([len(values)])
    put("fuzz_mean_image", str(n), shape + bytes([5 << 3 | 2]) + size + values)
for f in files("images"):
    if f.suffix in (".jpg", ".png"):
        for choice in (0, 1, 2, 3, 4, 5, 8 + 1, 16 + 2, 32 + 5):  # transform, channels, layout, BGR
            put("fuzz_image", f"{f.name}.{choice}", bytes([choice]) + f.read_bytes())
