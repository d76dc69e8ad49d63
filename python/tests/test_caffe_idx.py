"""Caffe's LMDB of Datum and IDX files through Python, against Caffe's own output,
python3-lmdb and numpy."""

import gzip
import shutil
import struct
import zlib

import numpy as np
import pytest

import tablio


@pytest.fixture
def lmdb_copy(data, tmp_path):
    """A copy of a database in tests/data: opening one may create its lock file."""
    def copy(name):
        shutil.copytree(data / "caffe" / name, tmp_path / name)
        return tmp_path / name
    return copy


def datum_lines(path):
    return [line.rstrip("\n").split("\t") for line in open(path) if not line.startswith("#")]


def test_caffe_lmdb_reads_as_caffe_wrote_it(data, lmdb_copy):
    db = lmdb_copy("fashion_t10k_1000_lmdb")
    expected = datum_lines(data / "caffe" / "datum.expect")
    entries = list(tablio.open(f"lmdb:{db}", type="datum"))
    assert [k for k, _ in entries] == [e[0] for e in expected]
    for (key, (image, label)), e in zip(entries, expected):
        assert label == int(e[1])
        assert image.shape == (int(e[2]), int(e[3]), int(e[4])) and image.dtype == np.uint8
        assert "%08x" % zlib.crc32(image.tobytes()) == e[6]
    raw = dict(tablio.open(f"lmdb:{db}", type="bytes"))
    for e in expected[:3]:
        assert raw[e[0]].hex() == e[11]


def test_float_and_encoded_datums(lmdb_copy):
    db = lmdb_copy("float_encoded_lmdb")
    entries = dict(tablio.open(f"lmdb:{db}", type="datum"))
    image, label = entries["00000000"]
    assert label == -1 and image.dtype == np.float32 and image.shape == (1, 2, 3)
    encoded, label = entries["00000001"]
    assert label == 7 and isinstance(encoded, bytes) and encoded[:2] == b"\xff\xd8"


def test_datum_pixels_and_labels_that_do_not_fit_are_refused(tmp_path):
    with tablio.writer(f"lmdb:{tmp_path}/db", type="datum") as out:
        out["wide"] = (np.array([[[0, 255]]], dtype=np.int64), 3)  # fits: stored as bytes
        for bad in (np.array([[[300, 1]]]), np.array([[[-1, 1]]], dtype=np.int16), np.array([[[256]]], np.uint16)):
            with pytest.raises(ValueError, match="the value for key 'bad': datum: the pixel .* does not fit in uint8"):
                out["bad"] = (bad, 1)
        with pytest.raises(ValueError, match="label 1099511627776 does not fit in int32"):
            out["bad"] = (np.zeros((1, 1, 1), np.uint8), 2**40)
        with pytest.raises(TypeError, match="label is an int"):
            out["bad"] = (np.zeros((1, 1, 1), np.uint8), 1.5)
        out["numpy_label"] = (np.zeros((1, 1, 1), np.uint8), np.int64(7))
    entries = dict(tablio.open(f"lmdb:{tmp_path}/db", type="datum"))
    assert sorted(entries) == ["numpy_label", "wide"]
    assert entries["wide"][0].tolist() == [[[0, 255]]] and entries["wide"][1] == 3
    assert entries["numpy_label"][1] == 7


def test_datums_whose_dimensions_do_not_fit_their_data_come_flat(tmp_path):
    lmdb = pytest.importorskip("lmdb")

    def datum(channels, data, label):  # Caffe's Datum: channels 1, height 2, width 3, data 4, label 5
        return bytes([8, channels, 16, 2, 24, 2, 34, len(data)]) + data + bytes([40, label])

    with lmdb.open(str(tmp_path / "db"), map_size=1 << 20) as env, env.begin(write=True) as txn:
        txn.put(b"a", datum(2, bytes(range(6)), 1))  # 2x2x2 claimed, 6 bytes held
        txn.put(b"b", datum(2, bytes(range(6, 12)), 2))
        txn.put(b"c", datum(1, bytes(range(4)), 3))  # fits: (1, 2, 2)
    entries = list(tablio.open(f"lmdb:{tmp_path}/db", type="datum"))
    assert [(k, v[0].shape, v[1]) for k, v in entries] == [("a", (6,), 1), ("b", (6,), 2), ("c", (1, 2, 2), 3)]
    assert tablio.random_access(f"lmdb:{tmp_path}/db", type="datum")["b"][0].tolist() == list(range(6, 12))
    keys, (images, labels) = next(tablio.open(f"lmdb:{tmp_path}/db", type="datum").batches(2))
    assert keys == ["a", "b"] and images.shape == (2, 6) and labels.tolist() == [1, 2]
    keys, (images, labels) = tablio.load(f"lmdb:{tmp_path}/db", type="datum")
    assert [i.shape for i in images] == [(6,), (6,), (1, 2, 2)] and images[1].tolist() == list(range(6, 12))


def test_random_access_and_batches_over_lmdb(lmdb_copy):
    db = lmdb_copy("fashion_t10k_1000_lmdb")
    per_record = list(tablio.open(f"lmdb:{db}", type="datum"))
    table = tablio.random_access(f"lmdb:{db}", type="datum")
    assert len(table) == 1000
    image, label = table["00000123"]
    assert label == per_record[123][1][1]
    np.testing.assert_array_equal(image, per_record[123][1][0])
    assert "00001000" not in table
    looked_up = table.lookup(["00000123", "00000007"])
    np.testing.assert_array_equal(looked_up[0][0], image)
    assert looked_up[1][1] == per_record[7][1][1]
    with pytest.raises(KeyError, match="00001000"):
        table.lookup(["00000001", "00001000"])
    batches = list(tablio.open(f"lmdb:{db}", type="datum").batches(256))
    assert [len(k) for k, _ in batches] == [256, 256, 256, 232]
    images = np.concatenate([b[1][0] for b in batches])
    labels = np.concatenate([b[1][1] for b in batches])
    assert images.shape == (1000, 1, 28, 28)
    np.testing.assert_array_equal(images, np.stack([v[0] for _, v in per_record]))
    np.testing.assert_array_equal(labels, [v[1] for _, v in per_record])


def test_scale_gives_float_images_as_caffes_transformer_does(lmdb_copy):
    db = lmdb_copy("fashion_t10k_1000_lmdb")
    raw = list(tablio.open(f"lmdb:{db}", type="datum"))
    # Caffe's DataTransformer: float(pixel) * scale, in float32.
    expected = np.stack([v[0] for _, v in raw]).astype(np.float32) * np.float32(1 / 255)
    scaled = list(tablio.open(f"lmdb:{db}", type="datum", scale=1 / 255))
    assert all(image.dtype == np.float32 and image.shape == (1, 28, 28) for _, (image, _) in scaled)
    np.testing.assert_array_equal(np.stack([v[0] for _, v in scaled]), expected)
    assert [v[1] for _, v in scaled] == [v[1] for _, v in raw]
    image, label = tablio.random_access(f"lmdb:{db}", type="datum", scale=1 / 255)["00000123"]
    np.testing.assert_array_equal(image, expected[123])
    keys, (images, labels) = tablio.load(f"lmdb:{db}", type="datum", scale=1 / 255)
    assert images.dtype == np.float32
    np.testing.assert_array_equal(images, expected)


def test_scale_multiplies_float_data_and_refuses_encoded_images(lmdb_copy):
    db = lmdb_copy("float_encoded_lmdb")
    table = tablio.random_access(f"lmdb:{db}", type="datum", scale=0.5)
    plain = tablio.random_access(f"lmdb:{db}", type="datum")
    np.testing.assert_array_equal(table["00000000"][0], plain["00000000"][0] * np.float32(0.5))
    with pytest.raises(tablio.UsageError, match="encoded image"):
        table["00000001"]
    with pytest.raises(tablio.UsageError, match="scale= applies to datum"):
        tablio.open(f"lmdb:{db}", type="bytes", scale=2)


def test_python_lmdb_reads_tablios_database_and_back(tmp_path, lmdb_copy):
    lmdb = pytest.importorskip("lmdb")
    source = lmdb_copy("fashion_t10k_1000_lmdb")
    ours = tmp_path / "ours_lmdb"
    with tablio.writer(f"lmdb:{ours}", type="datum") as w:
        for key, value in tablio.open(f"lmdb:{source}", type="datum"):
            w[key] = value
    with lmdb.open(str(source), readonly=True, lock=False) as env_a, \
         lmdb.open(str(ours), readonly=True, lock=False) as env_b:
        with env_a.begin() as a, env_b.begin() as b:
            assert list(a.cursor()) == list(b.cursor())  # every key and Datum byte-identical
    theirs = tmp_path / "theirs_lmdb"
    with lmdb.open(str(theirs), map_size=1 << 26) as env:
        with env.begin(write=True) as txn:
            for key, payload in tablio.open(f"lmdb:{source}", type="bytes"):
                txn.put(key.encode(), payload)
    assert [k for k, _ in tablio.open(f"lmdb:{theirs}", type="datum")] == \
        [k for k, _ in tablio.open(f"lmdb:{source}", type="datum")]


TYPES = {"u8": ">u1", "i8": ">i1", "i16": ">i2", "i32": ">i4", "f32": ">f4", "f64": ">f8"}


def numpy_idx(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    ndims = raw[3]
    dims = struct.unpack(">" + "I" * ndims, raw[4:4 + 4 * ndims])
    dtype = {8: ">u1", 9: ">i1", 11: ">i2", 12: ">i4", 13: ">f4", 14: ">f8"}[raw[2]]
    return np.frombuffer(raw, dtype=dtype, offset=4 + 4 * ndims).reshape(dims)


@pytest.mark.parametrize("name", [f"{t}-{d}d.idx" for t in TYPES for d in (1, 2, 3)] + ["u8-1d-empty.idx"])
def test_idx_types_agree_with_numpy(data, tmp_path, name):
    path = data / "idx" / "types" / name
    ours = tablio.idx.read(str(path))
    theirs = numpy_idx(path)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert ours.tobytes() == theirs.tobytes()  # NaN payloads and -0.0 included
    assert not ours.flags.writeable
    copy = tmp_path / name
    tablio.idx.write(str(copy), ours)
    assert copy.read_bytes() == path.read_bytes()
    tablio.idx.write(str(copy), ours.astype(ours.dtype.newbyteorder("=")))
    assert copy.read_bytes() == path.read_bytes()


def test_idx_gzip_and_fashion(data):
    for name in ("t10k-images-100-idx3-ubyte", "t10k-labels-100-idx1-ubyte"):
        plain = tablio.idx.read(str(data / "idx" / "fashion" / name))
        packed = tablio.idx.read(str(data / "idx" / "fashion" / (name + ".gz")))
        np.testing.assert_array_equal(plain, packed)
        np.testing.assert_array_equal(plain, numpy_idx(data / "idx" / "fashion" / name))
    images = tablio.idx.read(str(data / "idx" / "fashion" / "t10k-images-100-idx3-ubyte"))
    assert images.shape == (100, 28, 28)


@pytest.mark.parametrize("name", ["truncated-data-idx3-ubyte", "bad-magic-byte0-idx1-ubyte",
                                  "bad-type-0x0a-idx1-ubyte", "trailing-bytes-idx1-ubyte",
                                  "bytes-overflow-f64.idx", "dims-overflow-u8.idx"])
def test_bad_idx_files_raise_with_path_and_offset(data, name):
    path = str(data / "idx" / "bad" / name)
    with pytest.raises(tablio.FormatError) as caught:
        tablio.idx.read(path)
    assert caught.value.path == path
    assert caught.value.offset is not None


def test_idx_tables(data):
    images = data / "idx" / "fashion" / "t10k-images-100-idx3-ubyte"
    keys, stacked = tablio.load(f"idx:{images}", type="bytes")
    assert len(keys) == 100


def test_numbers_a_type_cannot_hold_are_refused_naming_the_item(tmp_path):
    path = str(tmp_path / "floats-idx2")
    tablio.idx.write(path, np.array([[1, -2], [3e10, 1], [2.5, 0]], np.float32))
    table = tablio.open(f"idx:{path}", type="int-vector")
    assert next(table)[1].tolist() == [1, -2]
    with pytest.raises(tablio.FormatError, match="32-bit signed integers") as caught:
        next(table)
    assert (caught.value.path, caught.value.key, caught.value.offset) == (path, "00000001", 20)
    assert "3.0000001e+10" in str(caught.value)
    with pytest.raises(tablio.FormatError, match="2.5"):
        tablio.random_access(f"idx:{path}", type="int-vector")["00000002"]
    # The same items as float vectors, (N, D), and back.
    keys, vectors = tablio.load(f"idx:{path}", type="vector")
    assert keys == ["00000000", "00000001", "00000002"] and vectors.shape == (3, 2)
    assert vectors[1].tolist() == [np.float32(3e10), 1.0]
    with tablio.writer(f"idx:{tmp_path}/back-idx2", type="vector") as w:
        for key, vector in zip(keys, vectors):
            w[key] = vector
    assert (tablio.idx.read(f"{tmp_path}/back-idx2") == np.array([[1, -2], [3e10, 1], [2.5, 0]], np.float32)).all()


def test_an_lmdb_writer_replaces_the_database_and_writes_each_key_once(tmp_path):
    db = f"lmdb:{tmp_path}/db"
    image = np.zeros((1, 2, 2), np.uint8)
    with tablio.writer(db, type="datum") as w:
        w["old1"], w["old2"] = (image, 1), (image, 2)
    with tablio.writer(db, type="datum") as w:
        w["new"] = (image, 3)
    assert tablio.random_access(db, type="datum").keys() == ["new"]  # never old and new mixed
    w = tablio.writer(db, type="datum")
    w["b"] = (image, 1)
    with pytest.raises(tablio.UsageError, match="key 'b' written twice"):
        w["b"] = (image, 2)
    w.close()
    table = tablio.random_access(db, type="datum")
    assert table.keys() == ["b"] and table["b"][1] == 1


def test_lmdb_keys_of_any_bytes_are_copied_as_they_are_read(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    keys = [b"00000007_my photo.jpg", b"\xff\xfe", b"tab\there", b"k\x7f"]
    theirs = tmp_path / "theirs_lmdb"
    with lmdb.open(str(theirs), map_size=1 << 22) as env:
        with env.begin(write=True) as txn:
            for i, key in enumerate(keys):
                txn.put(key, b"value %d" % i)
    ours = tmp_path / "ours_lmdb"
    with tablio.writer(f"lmdb:{ours}", type="bytes") as w:
        for key, value in tablio.open(f"lmdb:{theirs}", type="bytes"):
            w[key] = value  # a key that is not UTF-8 comes as surrogates and goes back as its bytes
    with lmdb.open(str(theirs), readonly=True, lock=False) as a, lmdb.open(str(ours), readonly=True, lock=False) as b:
        with a.begin() as ta, b.begin() as tb:
            assert list(ta.cursor()) == list(tb.cursor())
    with pytest.raises(tablio.UsageError, match="invalid key"):  # an archive's keys are tokens
        with tablio.writer(f"ark:{tmp_path}/a.ark", type="bytes") as w:
            w["tab\there"] = b"x"


def test_integers_a_float_would_round_are_refused(tmp_path):
    path = str(tmp_path / "ints-idx2")
    tablio.idx.write(path, np.array([[16777216], [16777217], [2147483647]], np.int32))
    table = tablio.open(f"idx:{path}", type="vector")  # each item a float32 vector of one
    assert next(table)[1].tolist() == [16777216.0]
    with pytest.raises(tablio.FormatError, match="16777217") as caught:
        next(table)
    assert (caught.value.path, caught.value.key) == (path, "00000001")
    with pytest.raises(tablio.FormatError, match="2147483647"):
        tablio.random_access(f"idx:{path}", type="vector")["00000002"]
    keys, doubles = tablio.load(f"idx:{path}", type="vector", dtype=np.float64)  # double holds them all
    assert doubles[:, 0].tolist() == [16777216, 16777217, 2147483647]


def test_a_datum_that_does_not_decode_is_named_where_it_is_in_the_data_file(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    bad = b"\x08\x01\x10\x02\x18\x02\x22\x09only 4 b"  # data (field 4) says 9 bytes; 8 follow
    with lmdb.open(str(tmp_path / "db"), map_size=1 << 20) as env, env.begin(write=True) as txn:
        txn.put(b"00000000", b"\x08\x01\x10\x01\x18\x01\x22\x01x")
        txn.put(b"00000001", bad)
    with pytest.raises(tablio.FormatError) as caught:
        list(tablio.open(f"lmdb:{tmp_path}/db", type="datum"))
    file = tmp_path / "db" / "data.mdb"
    at = file.read_bytes().find(bad)
    assert (caught.value.path, caught.value.key) == (str(file), "00000001")
    assert at > 0 and at <= caught.value.offset <= at + len(bad)
