"""TFRecord of tf.Example and tf.SequenceExample through Python: the files TensorFlow's
tools wrote, read to the values libprotobuf parsed; python3-protobuf parses what tablio
writes and tablio reads what it writes."""

import glob
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tablio

GENERATED = ["tutorial10.tfrecord", "tutorial10.gz.tfrecord", "tutorial10.zlib.tfrecord"]


def expected_feature(f):
    if "int64" in f:
        return np.array(f["int64"], dtype=np.int64)
    if "float_bits" in f:
        return np.array(f["float_bits"], dtype=np.uint32).view(np.float32)
    if "bytes_hex" in f:
        return [bytes.fromhex(b) for b in f["bytes_hex"]]
    return None


def assert_feature(actual, expected):
    if isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray) and actual.dtype == expected.dtype
        assert actual.tobytes() == expected.tobytes()
    else:
        assert actual == expected


def assert_features(actual, expected_json):
    assert list(actual) == list(expected_json)
    for name, f in expected_json.items():
        assert_feature(actual[name], expected_feature(f))


def expect_lines(path):
    return [json.loads(line) for line in open(str(path) + ".expect")]


@pytest.mark.parametrize("name", GENERATED)
def test_examples_read_as_libprotobuf_parses_them(data, name):
    path = data / "tfrecord" / "generated" / name
    expected = expect_lines(path)
    with tablio.open(f"tfrecord:{path}", type="example") as table:
        entries = list(table)
    assert len(entries) == len(expected)
    for (key, example), e in zip(entries, expected):
        assert_features(example, e["example"])


def test_real_tfx_files(data):
    for path in sorted(glob.glob(str(data / "tfrecord" / "tfx" / "*.tfrecord*"))):
        if path.endswith(".expect"):
            continue
        expected = expect_lines(path)
        entries = list(tablio.open(f"tfrecord:{path}", type="example"))
        assert len(entries) == len(expected), path
        for (key, example), e in list(zip(entries, expected))[:10]:
            assert_features(example, e["example"])


def test_sequence_examples(data):
    path = data / "tfrecord" / "generated" / "seq10.tfrecord"
    for (key, (context, lists)), e in zip(tablio.open(f"tfrecord:{path}", type="sequence-example"),
                                          expect_lines(path)):
        assert_features(context, e["sequence_example"]["context"])
        assert list(lists) == list(e["sequence_example"]["feature_lists"])
        for name, features in e["sequence_example"]["feature_lists"].items():
            assert len(lists[name]) == len(features)
            for a, f in zip(lists[name], features):
                assert_feature(a, expected_feature(f))


def test_a_features_kind_holds_through_every_round_trip_and_str_is_refused(tmp_path):
    kinds = {"b": [], "i": np.array([], np.int64), "f": np.array([], np.float32), "n": None,
             "bs": [b"x", b""], "is": np.array([1, -2]), "fs": np.array([0.5], np.float32)}
    path = f"tfrecord:{tmp_path}/kinds.tfrecord"
    with tablio.writer(path, type="example") as w:
        w.append(kinds)
    [(_, back)] = list(tablio.open(path, type="example"))
    assert back["b"] == [] and back["bs"] == [b"x", b""] and back["n"] is None
    assert (back["i"].dtype, back["f"].dtype, back["is"].dtype, back["fs"].dtype) == (np.int64, np.float32,
                                                                                       np.int64, np.float32)
    with tablio.writer(f"tfrecord:{tmp_path}/again.tfrecord", type="example") as w:
        w.append(back)  # what was read, written back: the same record
    assert (tmp_path / "again.tfrecord").read_bytes() == (tmp_path / "kinds.tfrecord").read_bytes()
    with tablio.writer(f"tfrecord:{tmp_path}/str.tfrecord", type="example") as w:
        for bad in ({"caption": "a cat"}, {"caption": ["a", "cat"]}, {"caption": np.array(["a"])},
                    {"caption": [b"a", 3]}):
            with pytest.raises(TypeError, match="feature 'caption'"):
                w.append(bad)


def test_records_written_back_are_byte_identical(data, tmp_path):
    path = data / "tfrecord" / "generated" / "tutorial10.tfrecord"
    out = tmp_path / "copy.tfrecord"
    with tablio.writer(f"tfrecord:{out}", type="example") as w:
        for key, example in tablio.open(f"tfrecord:{path}", type="example"):
            w[key] = example
    assert out.read_bytes() == path.read_bytes()
    raw = tmp_path / "raw.tfrecord"
    with tablio.writer(f"tfrecord:{raw}", type="bytes") as w:
        for key, payload in tablio.open(f"tfrecord:{path}", type="bytes"):
            w[key] = payload
    assert raw.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("name,code,records", [("bad_lencrc", "DATA_LOSS", 1), ("bad_datacrc", "DATA_LOSS", 1),
                                               ("bad_trunc_data", "DATA_LOSS", 9)])
def test_corrupt_records_are_data_loss_with_offset(data, name, code, records):
    path = data / "tfrecord" / "corrupt" / f"{name}.tfrecord"
    error = expect_lines(path)[-1]["error"]
    got = []
    with pytest.raises(tablio.DataLossError) as caught:
        for key, example in tablio.open(f"tfrecord:{path}", type="example"):
            got.append(key)
    assert len(got) == records
    assert caught.value.path == str(path)
    # TensorFlow's message names the payload's offset for a bad data CRC, the header's else.
    assert caught.value.offset == int(re.search(r" at (\d+)", error["message"]).group(1))
    assert isinstance(caught.value, tablio.FormatError)


def test_batches_stack_fixed_length_features(data):
    path = data / "tfrecord" / "tfx" / "mnist.tfrecord"
    per_record = list(tablio.open(f"tfrecord:{path}", type="example"))
    batches = list(tablio.open(f"tfrecord:{path}", type="example").batches(256))
    assert [len(keys) for keys, _ in batches] == [256, 256, 256, 232]
    start = 0
    for keys, features in batches:
        assert keys == [k for k, _ in per_record[start:start + len(keys)]]
        for name, stacked in features.items():
            assert isinstance(stacked, np.ndarray) and stacked.shape[0] == len(keys)
            for i, (_, example) in enumerate(per_record[start:start + len(keys)]):
                assert stacked[i].tobytes() == example[name].tobytes()
        start += len(keys)
    keys, everything = tablio.load(f"tfrecord:{path}", type="example")
    assert len(keys) == 1000 and all(v.shape[0] == 1000 for v in everything.values())


def test_a_tfrecord_writer_refuses_keys_it_would_lose(tmp_path):
    # A TFRecord file keeps no keys: reading numbers its records, so another key would be lost.
    spec = f"tfrecord:{tmp_path}/k.tfrecord"
    with tablio.writer(spec, type="example") as w:
        with pytest.raises(tablio.UsageError, match=r"keeps no keys.*not 'utt-A'.*tfrecord,scp:"):
            w["utt-A"] = {"x": np.array([1])}
        w.append({"x": np.array([1])})  # the next record number
        w["00000001"] = {"x": np.array([2])}  # or that number, given
        w.append({"x": np.array([3])})
    assert [k for k, _ in tablio.open(spec, type="example")] == ["00000000", "00000001", "00000002"]
    # Keys kept in a feature or in a script beside the file are any keys.
    with tablio.writer(f"tfrecord,key=utt:{tmp_path}/f.tfrecord", type="example") as w:
        w["utt-A"] = {"x": np.array([1])}
    assert [k for k, _ in tablio.open(f"tfrecord,key=utt:{tmp_path}/f.tfrecord", type="example")] == ["utt-A"]


def test_ragged_features_come_as_lists(tmp_path):
    out = tmp_path / "ragged.tfrecord"
    with tablio.writer(f"tfrecord:{out}", type="example") as w:
        w.append({"x": np.array([1, 2], np.int64), "y": [b"p"]})
        w.append({"x": np.array([3], np.int64)})
    [(keys, features)] = list(tablio.open(f"tfrecord:{out}", type="example").batches(10))
    assert keys == ["00000000", "00000001"]  # records keep no key: their ordinals stand in
    assert [v.tolist() for v in features["x"]] == [[1, 2], [3]]
    assert features["y"] == [[b"p"], None]


def as_plain(value):
    """A value read with view=True, as the plain read gives it: arrays and bytes."""
    if isinstance(value, np.ndarray):
        assert not value.flags.writeable
        return value.copy()
    if isinstance(value, memoryview):
        assert value.readonly
        return bytes(value)
    if isinstance(value, dict):
        return {k: as_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(as_plain(v) for v in value)
    return value


def assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    elif isinstance(a, (dict, list, tuple)):
        assert len(a) == len(b) and (list(a) == list(b) if isinstance(a, dict) else True)
        for x, y in (zip(a.values(), b.values()) if isinstance(a, dict) else zip(a, b)):
            assert_same(x, y)
    else:
        assert a == b


@pytest.mark.parametrize("name,type_", [("tutorial10.tfrecord", "example"), ("edge_cases.tfrecord", "example"),
                                        ("seq10.tfrecord", "sequence-example")])
def test_view_gives_read_only_views_of_one_buffer(data, name, type_):
    rspec = f"tfrecord:{data / 'tfrecord' / 'generated' / name}"
    plain = list(tablio.open(rspec, type=type_))
    reader = tablio.open(rspec, type=type_, view=True)
    viewed = list(reader)  # every record's views kept past the next record
    reader.close()
    assert [k for k, _ in viewed] == [k for k, _ in plain]
    for (_, v), (_, p) in zip(viewed, plain):
        assert_same(as_plain(v), p)
    looked_up = tablio.random_access(rspec, type=type_, view=True)[plain[-1][0]]
    assert_same(as_plain(looked_up), plain[-1][1])


@pytest.mark.parametrize("name,type_", [("tutorial10.tfrecord", "example"), ("edge_cases.tfrecord", "example"),
                                        ("seq10.tfrecord", "sequence-example")])
def test_random_access_values_are_copies_of_what_the_table_keeps(data, name, type_):
    rspec = f"tfrecord:{data / 'tfrecord' / 'generated' / name}"
    plain = list(tablio.open(rspec, type=type_))
    table = tablio.random_access(rspec, type=type_)
    keys = [k for k, _ in plain]
    for (key, expected), looked_up in zip(plain, table.lookup(keys[::-1])[::-1]):
        assert_same(looked_up, expected)
    # Changing a value Python got changes nothing the table gives next.
    first = table[keys[0]]
    arrays = [a for a in (first.values() if isinstance(first, dict) else first[0].values())
              if isinstance(a, np.ndarray) and a.size]
    for a in arrays:
        a[...] = 0
    assert_same(table[keys[0]], plain[0][1])


def test_views_of_a_record_share_its_buffer(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/r.tfrecord", type="example") as w:
        w.append({"f": np.array([1.5, 2.5], np.float32), "i": np.array([7, 8, 9]), "b": [b"xy", b"z"]})
    [(key, e)] = list(tablio.open(f"tfrecord:{tmp_path}/r.tfrecord", type="example", view=True))
    assert e["f"].base is e["i"].base and e["b"][0].obj is e["f"].base
    assert e["f"].tolist() == [1.5, 2.5] and e["i"].tolist() == [7, 8, 9] and [bytes(b) for b in e["b"]] == [b"xy", b"z"]
    with pytest.raises(ValueError):
        e["f"][0] = 0
    with pytest.raises(tablio.UsageError, match="view=True applies"):
        tablio.open(f"tfrecord:{tmp_path}/r.tfrecord", type="bytes", view=True)


def write_images(path, images, labels):
    with tablio.writer(f"tfrecord:{path}", type="example") as w:
        for i, (image, label) in enumerate(zip(images, labels)):
            w.append({"label": np.array([label]), "image_raw": [image.tobytes()]})


def test_equal_bytes_values_stack_as_uint8(tmp_path):
    images = np.random.default_rng(1).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    write_images(tmp_path / "images.tfrecord", images, range(5))
    keys, batch = tablio.load(f"tfrecord:{tmp_path}/images.tfrecord", type="example")
    assert batch["image_raw"].dtype == np.uint8 and batch["image_raw"].shape == (5, 1, 12)
    np.testing.assert_array_equal(batch["image_raw"].reshape(5, 4, 3), images)


def test_decode_raw_reads_bytes_as_numbers_as_tensorflow_does(tmp_path):
    images = np.random.default_rng(2).integers(0, 65536, (7, 2, 3), dtype=np.uint16)
    write_images(tmp_path / "images.tfrecord", images, range(7))
    rspec = f"tfrecord:{tmp_path}/images.tfrecord"
    as_u16 = {"image_raw": np.uint16}
    for i, (key, e) in enumerate(tablio.open(rspec, type="example", decode_raw=as_u16)):
        assert e["image_raw"].dtype == np.uint16 and e["image_raw"].shape == (1, 6)
        np.testing.assert_array_equal(e["image_raw"].reshape(2, 3), images[i])
        assert e["label"].tolist() == [i]
    looked_up = tablio.random_access(rspec, type="example", decode_raw={"image_raw": "<i2"})["00000003"]
    np.testing.assert_array_equal(looked_up["image_raw"], images[3].reshape(1, 6).view(np.int16))
    keys, batch = tablio.load(rspec, type="example", decode_raw=as_u16)
    assert batch["image_raw"].shape == (7, 1, 6)
    np.testing.assert_array_equal(batch["image_raw"].reshape(7, 2, 3), images)
    # scale: float32 numbers times the factor, in one pass.
    keys, batch = tablio.load(rspec, type="example", decode_raw=as_u16, scale=0.5)
    assert batch["image_raw"].dtype == np.float32
    np.testing.assert_array_equal(batch["image_raw"].reshape(7, 2, 3), images.astype(np.float32) * np.float32(0.5))
    [(key, e)] = list(tablio.open(rspec, type="example", decode_raw=as_u16, scale=0.5))[:1]
    np.testing.assert_array_equal(e["image_raw"].reshape(2, 3), images[0].astype(np.float32) * np.float32(0.5))
    # A subarray dtype gives each value's shape.
    shaped = {"image_raw": (np.uint16, (2, 3))}
    [(key, e)] = list(tablio.open(rspec, type="example", decode_raw=shaped))[:1]
    assert e["image_raw"].shape == (1, 2, 3)
    np.testing.assert_array_equal(e["image_raw"][0], images[0])
    keys, batch = tablio.load(rspec, type="example", decode_raw=shaped)
    assert batch["image_raw"].shape == (7, 1, 2, 3)
    np.testing.assert_array_equal(batch["image_raw"][:, 0], images)
    with pytest.raises(tablio.FormatError, match="expected values of feature 'image_raw' of 4 numbers, as "
                                                 "decode_raw's shape, found 6 numbers") as caught:
        tablio.load(rspec, type="example", decode_raw={"image_raw": (np.uint16, (2, 2))})
    assert caught.value.path == rspec


def test_decode_raw_of_ragged_values_and_bad_lengths(tmp_path):
    out = tmp_path / "ragged.tfrecord"
    with tablio.writer(f"tfrecord:{out}", type="example") as w:
        w.append({"x": [b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"]})
        w.append({"x": [b"\x05\x00"]})
        w.append({"y": np.array([1])})
    rspec = f"tfrecord:{out}"
    [(keys, batch)] = list(tablio.open(rspec, type="example", decode_raw={"x": "<u2"}).batches(10))
    assert [v.tolist() if v is not None else None for v in batch["x"]] == [[[1, 2], [3, 4]], [[5]], None]
    with tablio.writer(f"tfrecord:{tmp_path}/bad.tfrecord", type="example") as w:
        w.append({"x": [b"\x01\x00", b"\x02"]})
        w.append({"x": [b"\x01\x00\x02"]})
    bad_spec = f"tfrecord:{tmp_path}/bad.tfrecord"
    bad = tablio.open(bad_spec, type="example", decode_raw={"x": np.uint16})
    with pytest.raises(tablio.FormatError, match="expected values of feature 'x' of one length, found 2 and 1 "
                                                 "bytes") as caught:
        next(bad)
    assert (caught.value.path, caught.value.key) == (bad_spec, "00000000")
    with pytest.raises(tablio.FormatError, match="expected values of feature 'x' of whole 2-byte numbers, "
                                                 "found 3 bytes") as caught:
        next(bad)
    assert (caught.value.path, caught.value.key) == (bad_spec, "00000001")
    looked_up = tablio.random_access(bad_spec, type="example", decode_raw={"x": np.uint16})
    with pytest.raises(tablio.FormatError, match="whole 2-byte numbers") as caught:
        looked_up.lookup(["00000001"])
    assert (caught.value.path, caught.value.key) == (bad_spec, "00000001")
    with pytest.raises(tablio.UsageError, match="cannot be decoded as complex64"):
        tablio.open(rspec, type="example", decode_raw={"x": np.complex64})
    with pytest.raises(tablio.UsageError, match="decode_raw= applies to type 'example'"):
        tablio.open(rspec, type="bytes", decode_raw={"x": np.uint8})
    with pytest.raises(tablio.UsageError, match="scale= applies"):
        tablio.open(rspec, type="example", scale=2)


def test_features_reads_only_the_named_features(tmp_path):
    out = tmp_path / "mixed.tfrecord"
    with tablio.writer(f"tfrecord:{out}", type="example") as w:
        w.append({"image_raw": [b"\x01\x02"], "label": np.array([1]), "width": np.array([2]), "id": [b"a"]})
        w.append({"label": np.array([2]), "image_raw": [b"\x03\x04"], "weight": np.array([0.5], np.float32)})
        w.append({"width": np.array([2])})
    rspec = f"tfrecord:{out}"
    wanted = ["label", "image_raw", "absent"]

    def plain(value):
        return {n: v.tolist() if isinstance(v, np.ndarray) else [bytes(b) for b in v] for n, v in value.items()}

    everything = {key: plain(e) for key, e in tablio.open(rspec, type="example")}
    expected = {key: {n: v for n, v in e.items() if n in wanted} for key, e in everything.items()}
    assert list(expected) == ["00000000", "00000001", "00000002"] and expected["00000002"] == {}
    for view in (False, True):
        assert {key: plain(e) for key, e in tablio.open(rspec, type="example", features=wanted, view=view)} == expected
        table = tablio.random_access(rspec, type="example", features=tuple(wanted), view=view)
        assert {key: plain(table[key]) for key in expected} == expected
    # Batches: a column per named feature, stacked when every record has it alike.
    keys, batch = tablio.load(rspec, type="example", features=["image_raw", "width"],
                              decode_raw={"image_raw": np.uint8})
    assert sorted(batch) == ["image_raw", "width"]
    assert [v.tolist() if v is not None else None for v in batch["image_raw"]] == [[[1, 2]], [[3, 4]], None]
    [(keys, batch)] = list(tablio.open(rspec, type="example", features=["label"]).batches(2))[:1]
    assert batch["label"].tolist() == [[1], [2]] and list(batch) == ["label"]
    assert tablio.load(rspec, type="example", features=[])[1] == {}
    with pytest.raises(tablio.UsageError, match="features= is a list of feature names"):
        tablio.open(rspec, type="example", features="label")
    with pytest.raises(tablio.UsageError, match="a feature name is str"):
        tablio.open(rspec, type="example", features=[3])
    with pytest.raises(tablio.UsageError, match="decode_raw names feature 'image_raw', which features= leaves out"):
        tablio.open(rspec, type="example", features=["label"], decode_raw={"image_raw": np.uint8})
    with pytest.raises(tablio.UsageError, match="features= applies to type 'example'"):
        tablio.open(rspec, type="sequence-example", features=["label"])


# ---- python3-protobuf, the peer

@pytest.fixture(scope="module")
def example_pb2(tmp_path_factory):
    pytest.importorskip("google.protobuf")
    proto = os.path.join(os.path.dirname(__file__), "../../tests/peer/tf_example.proto")
    out = tmp_path_factory.mktemp("pb")
    try:
        subprocess.run(["protoc", f"-I{os.path.dirname(proto)}", f"--python_out={out}", proto], check=True)
    except FileNotFoundError:
        pytest.skip("protoc is not installed")
    sys.path.insert(0, str(out))
    try:
        import tf_example_pb2
    finally:
        sys.path.pop(0)
    return tf_example_pb2


def random_features(rng):
    features = {}
    for i in range(rng.integers(0, 6)):
        kind = rng.integers(0, 3)
        n = int(rng.integers(0, 8))
        name = f"f{i}_{kind}"
        if kind == 0:
            features[name] = rng.integers(-2**63, 2**63 - 1, size=n, dtype=np.int64)
        elif kind == 1:
            features[name] = rng.standard_normal(n).astype(np.float32)
        else:
            features[name] = [rng.bytes(int(rng.integers(0, 20))) for _ in range(n)]
    return features


def fill_features(message, features):
    for name, value in features.items():
        feature = message.feature[name]
        if isinstance(value, list):
            feature.bytes_list.value.extend(value)
        elif value.dtype == np.int64:
            feature.int64_list.value.extend(value.tolist())
        else:
            feature.float_list.value.extend(value.tolist())


def python_features(message):
    out = {}
    for name, f in message.feature.items():
        kind = f.WhichOneof("kind")
        if kind == "bytes_list":
            out[name] = list(f.bytes_list.value)
        elif kind == "int64_list":
            out[name] = np.array(f.int64_list.value, dtype=np.int64)
        elif kind == "float_list":
            out[name] = np.array(f.float_list.value, dtype=np.float32)
        else:
            out[name] = None
    return out


def assert_same_features(a, b):
    assert sorted(a) == sorted(b)
    for name in a:
        if isinstance(b[name], np.ndarray):
            assert a[name].dtype == b[name].dtype and a[name].tobytes() == b[name].tobytes()
        else:
            assert a[name] == b[name]


def test_protobuf_and_tablio_read_each_others_examples(example_pb2, tmp_path):
    rng = np.random.default_rng(11)
    values = [random_features(rng) for _ in range(3000)]
    ours = tmp_path / "ours.tfrecord"
    with tablio.writer(f"tfrecord:{ours}", type="bytes") as raw, \
         tablio.writer(f"tfrecord:{tmp_path}/typed.tfrecord", type="example") as typed:
        for i, features in enumerate(values):
            message = example_pb2.Example()
            fill_features(message.features, features)
            raw.append(message.SerializeToString(deterministic=True))
            typed.append(features)  # [] is an empty bytes list, as it reads back
    # tablio reads what protobuf wrote ...
    for (key, features), expected in zip(tablio.open(f"tfrecord:{ours}", type="example"), values):
        assert_same_features(features, expected)
    # ... and protobuf parses what tablio wrote, which is its own deterministic bytes.
    for (k1, ours_bytes), (k2, pb_bytes), expected in zip(
            tablio.open(f"tfrecord:{tmp_path}/typed.tfrecord", type="bytes"),
            tablio.open(f"tfrecord:{ours}", type="bytes"), values):
        message = example_pb2.Example()
        message.ParseFromString(ours_bytes)
        assert_same_features(python_features(message.features), expected)
        assert ours_bytes == pb_bytes


def test_protobuf_and_tablio_read_each_others_sequence_examples(example_pb2, tmp_path):
    rng = np.random.default_rng(12)
    ours = tmp_path / "seq.tfrecord"
    written = []
    with tablio.writer(f"tfrecord:{ours}", type="sequence-example") as w:
        for i in range(1000):
            context = random_features(rng)
            lists = {f"l{j}": [v for v in random_features(rng).values()] for j in range(rng.integers(0, 3))}
            w.append((typed_empty(context), {k: [typed_empty({"x": v})["x"] for v in vs] for k, vs in lists.items()}))
            written.append((context, lists))
    for (key, payload), (context, lists) in zip(tablio.open(f"tfrecord:{ours}", type="bytes"), written):
        message = example_pb2.SequenceExample()
        message.ParseFromString(payload)
        assert_same_features(python_features(message.context), context)
        assert sorted(message.feature_lists.feature_list) == sorted(lists)
        for name, values in lists.items():
            got = [python_features_one(f) for f in message.feature_lists.feature_list[name].feature]
            assert len(got) == len(values)
            for g, v in zip(got, values):
                assert_same_features({"x": g}, {"x": v})
        assert message.SerializeToString(deterministic=True) == payload


def typed_empty(features):
    return {k: np.array([], "S") if isinstance(v, list) and not v else v for k, v in features.items()}


def python_features_one(feature):
    return python_features(_Wrap({"x": feature}))["x"]


class _Wrap:
    def __init__(self, features):
        self.feature = features


def test_edge_cases_decode_as_libprotobuf_does(data):
    path = data / "tfrecord" / "generated" / "edge_cases.tfrecord"
    expected = expect_lines(path)
    entries = list(tablio.open(f"tfrecord:{path}", type="example"))
    assert len(entries) == len(expected) == 20
    for (key, example), e in zip(entries, expected):
        assert_features(example, e["example"])


def test_tar_members_as_bytes(data):
    lines = [line.rstrip("\n").split("\t") for line in open(data / "tar" / "members.expect")]
    for name in ("gnu-ustar", "gnu-gnu", "gnu-posix", "python-pax"):
        entries = list(tablio.open(f"tar,ext=bin:{data / 'tar' / name}.tar", type="bytes"))
        assert [(k, str(len(v)), v[:1].decode()) for k, v in entries] == [tuple(line) for line in lines], name


def test_shard_splits_and_concatenates_back(data, tmp_path):
    source = data / "tfrecord" / "tfx" / "mnist.tfrecord"
    plan = tablio.shard(f"tfrecord:{source}", f"tfrecord:{tmp_path}/mnist.tfrecord", 3)
    assert [n for _, n in plan] == [334, 333, 333]
    assert plan[0][0] == f"tfrecord:{tmp_path}/mnist-00000-of-00003.tfrecord"
    joined = b"".join(open(f"{tmp_path}/mnist-{k:05d}-of-00003.tfrecord", "rb").read() for k in range(3))
    assert joined == source.read_bytes()
    keys = [k for k, _ in tablio.open(f"tfrecord:{tmp_path}/mnist-*-of-00003.tfrecord", type="bytes")]
    assert len(keys) == 1000
    by_bytes = tablio.shard(f"ark:{data}/kaldi/holders/float-matrix.bin.ark", f"ark:{tmp_path}/m.ark", 2,
                            by="bytes", type="matrix")
    assert sum(n for _, n in by_bytes) == 4
    # An archive's objects are matrices unless said otherwise, as the tool takes them.
    assert tablio.shard(f"ark:{data}/kaldi/scp/feats.ark", f"ark,scp:{tmp_path}/f.ark,{tmp_path}/f.scp", 2) == [
        (f"ark,scp:{tmp_path}/f.1.ark,{tmp_path}/f.1.scp", 2), (f"ark,scp:{tmp_path}/f.2.ark,{tmp_path}/f.2.scp", 1)]
    with pytest.raises(tablio.UsageError):
        tablio.shard(f"tfrecord:{source}", f"tfrecord:{tmp_path}/x", 2, by="lines")


def test_another_message_types_records_are_refused_not_read_empty(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/e.tfrecord", type="example") as w:
        w.append({"label": np.array([3])})
    # (A Datum in TFRecord is an Example of its form, with a "data" feature: this one is not.)
    with pytest.raises(tablio.FormatError, match="a value's Example form .* an Example of other features") as caught:
        tablio.load(f"tfrecord:{tmp_path}/e.tfrecord", type="datum")
    assert caught.value.path == f"{tmp_path}/e.tfrecord" and caught.value.key == "00000000"
    with tablio.writer(f"lmdb:{tmp_path}/db", type="datum") as w:
        w["k"] = (np.zeros((1, 2, 2), np.uint8), 7)
    for type_ in ("example", "sequence-example"):
        with pytest.raises(tablio.FormatError, match="a tf.") as caught:
            list(tablio.open(f"lmdb:{tmp_path}/db", type=type_))
        assert caught.value.key == "k"
    with pytest.raises(tablio.FormatError, match="a tf.Example"):
        tablio.random_access(f"lmdb:{tmp_path}/db", type="example")["k"]
    with pytest.raises(tablio.FormatError, match="a tf.Example"):
        list(tablio.open(f"lmdb:{tmp_path}/db", type="example", view=True))
    # An empty record is an empty message, as protobuf has it.
    with tablio.writer(f"tfrecord:{tmp_path}/empty.tfrecord", type="bytes") as w:
        w.append(b"")
    assert list(tablio.open(f"tfrecord:{tmp_path}/empty.tfrecord", type="example")) == [("00000000", {})]


def test_a_tar_read_as_another_extension_is_an_error_not_an_empty_table(tmp_path):
    with tablio.writer(f"tar:{tmp_path}/d.tar", type="datum") as w:
        w["a"] = (np.zeros((1, 2, 2), np.uint8), 1)
    assert len(tablio.load(f"tar:{tmp_path}/d.tar", type="datum")[0]) == 1
    for type_ in ("example", "bytes", "matrix"):
        with pytest.raises(tablio.FormatError, match="members named KEY") as caught:
            tablio.load(f"tar:{tmp_path}/d.tar", type=type_)
        assert "a.datum" in str(caught.value) and caught.value.path == f"{tmp_path}/d.tar"
    assert tablio.load(f"tar,ext=datum:{tmp_path}/d.tar", type="bytes")[0] == ["a"]
    with tablio.writer(f"tar:{tmp_path}/empty.tar", type="datum"):
        pass
    assert tablio.load(f"tar:{tmp_path}/empty.tar", type="example")[0] == []  # no members: empty


def test_messages_parses_each_record_with_a_generated_class(tmp_path):
    from google.protobuf import timestamp_pb2
    path = tmp_path / "stamps.tfrecord"
    with tablio.writer(f"tfrecord,scp:{path},{tmp_path / 'stamps.scp'}", type="bytes") as out:
        for i in range(5):
            out[f"t{i}"] = timestamp_pb2.Timestamp(seconds=i, nanos=7 * i).SerializeToString()
    rspec = f"scp:{tmp_path / 'stamps.scp'}"
    one_by_one = [(key, m.seconds, m.nanos) for key, m in tablio.messages(rspec, timestamp_pb2.Timestamp)]
    assert one_by_one == [(f"t{i}", i, 7 * i) for i in range(5)]
    batched = [(keys, [m.seconds for m in ms])
               for keys, ms in tablio.messages(rspec, timestamp_pb2.Timestamp, batch_size=2)]
    assert batched == [(["t0", "t1"], [0, 1]), (["t2", "t3"], [2, 3]), (["t4"], [4])]

    # A record that is no such message: an error naming the table and the key.
    with tablio.writer(f"tfrecord,scp:{path},{tmp_path / 'stamps.scp'}", type="bytes") as out:
        out["good"] = timestamp_pb2.Timestamp(seconds=1).SerializeToString()
        out["bad"] = b"\x08"  # a varint's tag, no varint
        out["cut"] = b"\x08\x01\x0c\x10\x02"  # an end-group tag: a parse cut short, not a message
    for batch_size in (None, 3):
        records = tablio.messages(rspec, timestamp_pb2.Timestamp, batch_size=batch_size)
        if batch_size is None:
            assert next(records)[0] == "good"
        with pytest.raises(tablio.FormatError, match="expected a google.protobuf.Timestamp message") as error:
            next(records)
        assert error.value.key == "bad" and error.value.path == rspec
    with tablio.writer(f"tfrecord,scp:{path},{tmp_path / 'stamps.scp'}", type="bytes") as out:
        out["cut"] = b"\x08\x01\x0c\x10\x02"
    with pytest.raises(tablio.FormatError, match="expected a google.protobuf.Timestamp message") as error:
        next(tablio.messages(rspec, timestamp_pb2.Timestamp))
    assert error.value.key == "cut"
