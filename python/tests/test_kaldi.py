"""Kaldi archives and scripts through Python: every file Kaldi wrote, read to the values
Kaldi read; written back byte for byte; bad archives raise what and where."""

import collections.abc
import glob
import os

import numpy as np
import pytest

import tablio
from expectations import KALDI_TYPES, assert_same, expected_value, kaldi_entries

HOLDER_FILES = sorted(
    os.path.basename(p)
    for p in glob.glob(os.path.join(os.path.dirname(__file__), "../../tests/data/kaldi/holders/*.ark"))
    if not os.path.basename(p).startswith("float-pair-vector")
)


def read_all(rspec, type_, dtype=None):
    with tablio.open(rspec, type=type_, dtype=dtype) as table:
        return list(table)


@pytest.mark.parametrize("name", HOLDER_FILES)
def test_holder_archives_read_as_kaldi_reads_them(data, name):
    path = data / "kaldi" / "holders" / name
    expected = kaldi_entries(str(path) + ".expect")
    type_, dtype = KALDI_TYPES[expected[0][1]]
    entries = read_all(f"ark:{path}", type_, dtype)
    assert [k for k, _ in entries] == [e[0] for e in expected]
    for (key, value), (_, t, dims, values) in zip(entries, expected):
        assert_same(value, expected_value(t, dims, values))


@pytest.mark.parametrize("stored,read_as", [("float-matrix", np.float64), ("double-matrix", np.float32),
                                            ("float-vector", np.float64), ("double-vector", np.float32)])
def test_the_other_precision_converts_as_kaldi_does(data, stored, read_as):
    path = data / "kaldi" / "holders" / f"{stored}.bin.ark"
    other = "double" if read_as == np.float64 else "float"
    expect = glob.glob(str(path) + f".as-{other}-*.expect")
    expected = kaldi_entries(expect[0])
    type_ = "matrix" if "matrix" in stored else "vector"
    for (key, value), (_, t, dims, values) in zip(read_all(f"ark:{path}", type_, read_as), expected):
        assert_same(value, expected_value(t, dims, values))


@pytest.mark.parametrize("name", HOLDER_FILES)
def test_archives_written_back_are_byte_identical(data, tmp_path, name):
    path = data / "kaldi" / "holders" / name
    type_, dtype = KALDI_TYPES[kaldi_entries(str(path) + ".expect")[0][1]]
    text = ".txt." in name
    out = tmp_path / "copy.ark"
    with tablio.writer(f"ark{',t' if text else ''}:{out}", type=type_, dtype=dtype) as w:
        for key, value in read_all(f"ark:{path}", type_, dtype):
            w[key] = value
    if text and type_ in ("matrix", "vector", "float", "double"):
        # Kaldi reads text back to 7 digits and writes what it read: compare with that.
        written = read_all(f"ark:{out}", type_, dtype)
        for (k1, v1), (k2, v2) in zip(written, read_all(f"ark:{path}", type_, dtype)):
            assert k1 == k2
            assert_same(v1, v2)
    else:
        assert out.read_bytes() == path.read_bytes()


@pytest.mark.parametrize("method", range(1, 8))
def test_compressed_matrices_decompress_bit_exact(data, method):
    path = data / "kaldi" / "compressed" / f"cm-method{method}.bin.ark"
    expected = kaldi_entries(str(path) + ".expect")
    for type_ in ("compressed-matrix", "matrix"):
        entries = read_all(f"ark:{path}", type_)
        assert [k for k, _ in entries] == [e[0] for e in expected]
        for (key, value), (_, t, dims, values) in zip(entries, expected):
            assert_same(value, expected_value(t, dims, values))


@pytest.mark.parametrize("method", range(1, 8))
def test_compression_writes_kaldis_bytes(data, tmp_path, method):
    source = data / "kaldi" / "compressed" / "cm-source.bin.ark"
    golden = data / "kaldi" / "compressed" / f"cm-method{method}.bin.ark"
    keys = [e[0] for e in kaldi_entries(str(golden) + ".expect")]
    values = dict(read_all(f"ark:{source}", "matrix"))
    out = tmp_path / "cm.ark"
    with tablio.writer(f"ark:{out}", type="matrix", compression_method=method) as w:
        for key in keys:
            w[key] = values[key]
    assert out.read_bytes() == golden.read_bytes()


@pytest.mark.parametrize("method", [None, 1, 2, 3, 7])
def test_one_rule_for_empty_matrices_compressed_or_not(tmp_path, method):
    # Kaldi reads a matrix with rows and no columns (or the reverse) back as 0x0: refused.
    for shape in [(0, 5), (5, 0)]:
        with tablio.writer(f"ark:{tmp_path / 'e.ark'}", type="matrix", compression_method=method) as w:
            with pytest.raises(tablio.UsageError, match="both positive or both zero"):
                w["a"] = np.zeros(shape, np.float32)
    with tablio.writer(f"ark:{tmp_path / 'e.ark'}", type="matrix", compression_method=method) as w:
        w["a"] = np.zeros((0, 0), np.float32)
    assert tablio.random_access(f"ark:{tmp_path / 'e.ark'}", type="matrix")["a"].shape == (0, 0)


def test_a_compression_method_is_an_int(tmp_path):
    for wrong in ("2", 2.0, True):
        with pytest.raises(TypeError, match="compression_method is an int"):
            tablio.writer(f"ark:{tmp_path / 'c.ark'}", compression_method=wrong)
    with tablio.writer(f"ark:{tmp_path / 'c.ark'}", compression_method=np.int64(2)) as w:
        w["a"] = np.ones((2, 2), np.float32)


@pytest.mark.parametrize("type_", ["vector", "int-vector", "token", "wave"])
def test_compression_is_refused_where_it_cannot_apply(tmp_path, type_):
    with pytest.raises(tablio.UsageError, match="compression_method= applies to types 'matrix'"):
        tablio.writer(f"ark:{tmp_path / 'v.ark'}", type=type_, compression_method=2)
    assert not (tmp_path / "v.ark").exists()


def test_scripts_read_what_they_point_at(in_folder):
    folder = in_folder("kaldi/scp")
    for script, type_ in [("feats.scp", "matrix"), ("ali.scp", "int-vector"), ("files.scp", "matrix"),
                          ("ranges.scp", "matrix"), ("wav.scp", "wave")]:
        expected = kaldi_entries(folder / (script + ".expect"))
        entries = read_all(f"scp:{script}", type_)
        assert [k for k, _ in entries] == [e[0] for e in expected], script
        for (key, value), (_, t, dims, values) in zip(entries, expected):
            assert_same(value, expected_value(t, dims, values))


def test_random_access_is_a_mapping(in_folder):
    folder = in_folder("kaldi/scp")
    expected = {e[0]: expected_value(*e[1:]) for e in kaldi_entries(folder / "feats.scp.expect")}
    with tablio.random_access("scp:feats.scp") as table:
        assert len(table) == len(expected)
        assert table.keys() == list(expected)
        for key in reversed(list(expected)):
            assert key in table
            assert_same(table[key], expected[key])
        assert "nope" not in table
        assert table.get("nope") is None
        assert table.get("nope", 7) == 7
        with pytest.raises(KeyError):
            table["nope"]
    archive = tablio.random_access("ark:feats.ark")
    assert archive.keys() == list(expected)
    assert len(archive) == len(expected)
    key = list(expected)[-1]
    assert_same(archive[key], expected[key])
    for table in (archive, tablio.random_access("scp:feats.scp")):
        assert isinstance(table, collections.abc.Mapping)
        assert [k for k, _ in table.items()] == list(expected) == list(table)
        for (k, value), other in zip(table.items(), table.values()):
            assert_same(value, expected[k])
            assert_same(other, expected[k])
        assert dict(table.items()).keys() == expected.keys()


def test_a_permissive_script_lists_its_lines_and_runs_no_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with tablio.writer("ark:good.ark", type="matrix") as w:
        w["x"] = np.ones((2, 2), np.float32)
    # A command that leaves a mark when it runs, a failing one, a missing file, a good one.
    with open("four.scp", "w") as f:
        f.write("a touch ran; cat good.ark |\nb false |\nc missing.ark\nd good.ark:2\n")
    for rspec in ("scp,p:four.scp", "scp:four.scp"):
        table = tablio.random_access(rspec, type="matrix")
        assert table.keys() == ["a", "b", "c", "d"] and len(table) == 4 == len(table.keys())
        assert not os.path.exists("ran"), "listing keys ran a command"
    table = tablio.random_access("scp,p:four.scp", type="matrix")
    # Under p a value that cannot be read is absent at lookup; items() and values() leave it out.
    assert [k for k in "abcd" if k in table] == ["d"]
    assert [k for k, _ in table.items()] == ["d"] and len(list(table.values())) == 1
    with pytest.raises(KeyError):
        table["b"]
    with pytest.raises(OSError):
        tablio.random_access("scp:four.scp", type="matrix")["b"]


def test_single_objects_as_kaldis_read_and_write_kaldi_object(in_folder, tmp_path):
    folder = in_folder("kaldi/scp")
    archive = (folder / "feats.ark").read_bytes()
    table = tablio.random_access("scp:feats.scp")
    lines = [line.split() for line in open("feats.scp")]
    offsets = sorted(int(rx.rsplit(":", 1)[1]) for _, rx in lines) + [len(archive)]
    for key, rx in lines:
        assert_same(tablio.load_object(rx), table[key])
        assert_same(tablio.load_object(f"cat feats.ark | tail -c +{int(rx.rsplit(':', 1)[1]) + 1} |"), table[key])
        # What Kaldi's WriteKaldiObject writes is the object as the archive holds it after its key.
        start = int(rx.rsplit(":", 1)[1])
        end = min(o for o in offsets if o > start)
        tablio.save_object(str(tmp_path / "one.mat"), table[key])
        expected = archive[start:end]
        expected = expected[:expected.rindex(b" ") - len(lines[[k for k, _ in lines].index(key) + 1][0])] \
            if end != len(archive) else expected
        assert (tmp_path / "one.mat").read_bytes() == expected
    first_key, first_rx = lines[0]
    assert_same(tablio.load_object(first_rx + "[1:2,0:1]"), table[first_key][1:3, 0:2])
    assert_same(tablio.load_object(first_rx + "[ 1:2]"), table[first_key][1:3])
    assert tablio.load_object(first_rx, dtype=np.float64).dtype == np.float64
    tablio.save_object(str(tmp_path / "cmvn.txt"), table[first_key], binary=False)
    assert_same(tablio.load_object(str(tmp_path / "cmvn.txt")), table[first_key])
    tablio.save_object(f"| cat > {tmp_path / 'cm.mat'}", table[first_key], compression_method=2)
    assert (tmp_path / "cm.mat").read_bytes().startswith(b"\0BCM ")  # method 2: kSpeechFeature
    with pytest.raises(OSError):
        tablio.load_object("exit 3 |")
    with pytest.raises(tablio.FormatError):
        tablio.load_object(first_rx + "[0:99,7:9]")


def test_a_table_and_its_script_written_together(tmp_path):
    rng = np.random.default_rng(5)
    values = {f"utt{i}": rng.standard_normal((i + 1, 3), dtype=np.float32) for i in range(6)}
    with tablio.writer(f"ark,scp:{tmp_path}/a.ark,{tmp_path}/a.scp") as w:
        for key, value in values.items():
            w.write(key, value)
    table = tablio.random_access(f"scp:{tmp_path}/a.scp")
    for key, value in values.items():
        np.testing.assert_array_equal(table[key], value)
    keys, stacked = tablio.load(f"ark:{tmp_path}/a.ark")
    assert keys == list(values)
    assert isinstance(stacked, list)  # shapes differ


def test_truncated_object_is_a_format_error_with_where(data):
    path = data / "kaldi" / "bad" / "trunc-in-object.ark"
    table = tablio.open(f"ark:{path}")
    keys = []
    with pytest.raises(tablio.FormatError) as caught:
        for key, _ in table:
            keys.append(key)
    assert keys == ["a_0x0", "b_1x1"]
    assert caught.value.path == str(path)
    assert caught.value.key == "c_3x4"
    assert caught.value.offset is not None and caught.value.offset > 0
    assert isinstance(caught.value, ValueError)


def test_a_wrong_argument_is_a_type_error_that_says_what_is_accepted(data):
    path = data / "kaldi" / "scp" / "feats.ark"
    with path.open("rb") as f:
        for function in (tablio.open, tablio.random_access, tablio.writer):
            with pytest.raises(TypeError, match=r"takes a specifier, a str such as 'ark:feats.ark'.*a file object "
                                                r"\(BufferedReader\).*e\.g\. 'ark:.*feats\.ark'"):
                function(f)
    for wrong in (5, None, b"ark:x", path):
        with pytest.raises(TypeError, match="takes a specifier"):
            tablio.open(wrong)
    # Bytes quoted from the input are a few dozen at most, whatever was there.
    with pytest.raises(tablio.FormatError) as caught:
        list(tablio.open(f"ark:{path}:15"))
    assert len(str(caught.value)) < 300 and caught.value.key is None


def test_permissive_ends_quietly_and_says_why(data):
    path = data / "kaldi" / "bad" / "trunc-in-object.ark"
    with tablio.open(f"p,ark:{path}") as table:
        assert [k for k, _ in table] == ["a_0x0", "b_1x1"]
        assert table.error != ""


def test_bad_markers_and_duplicates(data):
    bad = data / "kaldi" / "bad"
    with pytest.raises(tablio.FormatError):
        read_all(f"ark:{bad}/matrix-rows-marker08.ark", "matrix")
    with pytest.raises(tablio.FormatError):
        read_all(f"ark:{bad}/int32-marker08.ark", "int32")
    assert len(read_all(f"ark:{bad}/duplicate.ark", "int32")) == 4
    with pytest.raises(tablio.FormatError, match="duplicate"):
        tablio.random_access(f"ark:{bad}/duplicate.ark", type="int32")["nope"]


def test_usage_errors():
    with pytest.raises(tablio.UsageError):
        tablio.open("ark:x.ark", type="no-such-type")
    with pytest.raises(tablio.UsageError):
        tablio.open("nonsense-specifier")
    with pytest.raises(tablio.UsageError):
        tablio.open("ark:x.ark", dtype=np.int32)
    with pytest.raises(FileNotFoundError) as caught:
        tablio.open("ark:/nonexistent/x.ark")
    assert caught.value.filename == "/nonexistent/x.ark"
    assert caught.value.errno == 2


def test_a_closed_table_says_so(tmp_path):
    w = tablio.writer(f"ark:{tmp_path}/x.ark")
    w["a"] = np.zeros((1, 1), np.float32)
    w.close()
    w.close()
    with pytest.raises(tablio.UsageError, match="closed"):
        w["b"] = np.zeros((1, 1), np.float32)


def test_pipes_both_ways(tmp_path):
    value = np.arange(12, dtype=np.float32).reshape(3, 4)
    with tablio.writer(f"ark:| gzip -c > {tmp_path}/x.ark.gz") as w:
        w["k"] = value
    [(key, read)] = read_all(f"ark:gunzip -c {tmp_path}/x.ark.gz |", "matrix")
    np.testing.assert_array_equal(read, value)


def test_every_value_type_round_trips(tmp_path):
    values = {
        "matrix": np.arange(6, dtype=np.float32).reshape(2, 3),
        "vector": np.arange(4, dtype=np.float32),
        "int-vector": np.array([1, -2, 3], dtype=np.int32),
        "int-vector-vector": [np.array([1], np.int32), np.array([], np.int32), np.array([2, 3], np.int32)],
        "int-pair-vector": np.array([[1, 2], [3, 4]], np.int32),
        "token": "word",
        "token-vector": ["a", "b", "c"],
        "int32": -5,
        "float": 0.5,
        "double": 0.25,
        "bool": True,
        "wave": (16000.0, np.array([[0, 1, -1, 32767]], np.float32)),
    }
    for type_, value in values.items():
        for text in ("", ",t"):
            if type_ == "wave" and text:
                continue
            out = tmp_path / f"{type_}{text}.ark"
            with tablio.writer(f"ark{text}:{out}", type=type_) as w:
                w["k"] = value
            [(key, read)] = read_all(f"ark:{out}", type_)
            assert key == "k"
            assert_same(read, value)


def test_bad_archives_behave_as_kaldi(data, in_folder):
    bad = in_folder("kaldi/bad")  # bad-range.scp names ../scp/feats.ark
    # Cut inside a key: a clean end after two entries, as Kaldi reads it.
    assert [k for k, _ in read_all(f"ark:{bad}/trunc-in-key.ark", "matrix")] == ["a_0x0", "b_1x1"]
    # The s option on an unsorted archive: absent before the disorder is seen, an error after.
    table = tablio.random_access(f"s,ark:{bad}/unsorted.ark", type="int32")
    assert "k_a" not in table
    with pytest.raises(tablio.FormatError, match="sorted"):
        table["k_c"]
    plain = tablio.random_access(f"ark:{bad}/unsorted.ark", type="int32")
    assert (plain["k_c"], plain["k_a"]) == (3, 1)
    with pytest.raises(tablio.FormatError):
        read_all(f"scp:{bad}/bad-range.scp", "matrix")


def test_value_types_and_skip(tmp_path):
    assert {"matrix", "datum", "example", "bytes"} <= set(tablio.value_types())
    with tablio.writer(f"ark:{tmp_path}/a.ark", type="int32") as w:
        for i in range(5):
            w[f"k{i}"] = i
    table = tablio.open(f"ark:{tmp_path}/a.ark", type="int32")
    assert table.skip(2) == 2
    assert next(table) == ("k2", 2)
    assert table.skip(10) == 2
    assert list(table) == []


def test_waves_in_kaldiios_int16_layout(data, tmp_path):
    source = f"ark:{data / 'kaldi' / 'holders' / 'wav.bin.ark'}"
    floats = dict(tablio.open(source, type="wave"))
    shorts = dict(tablio.open(source, type="wave", dtype=np.int16))
    assert floats.keys() == shorts.keys()
    for key, (rate, samples) in shorts.items():
        float_rate, float_samples = floats[key]
        # kaldiio's layout: an int rate, int16 (samples,) for one channel, (samples, channels) for more.
        assert isinstance(rate, int) and rate == float_rate and samples.dtype == np.int16
        expected = float_samples[0] if float_samples.shape[0] == 1 else float_samples.T
        assert np.array_equal(samples, expected.astype(np.int16))
    # Written back from that layout, the archive is the same bytes.
    with tablio.writer(f"ark:{tmp_path / 'w.ark'}", type="wave", dtype=np.int16) as w:
        for key, value in shorts.items():
            w[key] = value
    assert (tmp_path / "w.ark").read_bytes() == (data / "kaldi" / "holders" / "wav.bin.ark").read_bytes()
    stereo = np.array([[1, -2], [3, -32768], [32767, 0]], np.int16)
    tablio.save_object(str(tmp_path / "s.wav"), (8000, stereo), type="wave", dtype=np.int16)
    rate, back = tablio.load_object(str(tmp_path / "s.wav"), type="wave", dtype=np.int16)
    assert rate == 8000 and np.array_equal(back, stereo)
    assert tablio.load_object(str(tmp_path / "s.wav"), type="wave")[1].shape == (2, 3)
    assert tablio.load_object(str(tmp_path / "s.wav"), type="wave", dtype=np.float64)[1].dtype == np.float64
    # Without type=, as kaldiio is called: waves in its layout, other values as stored.
    rate, back = tablio.load_object(str(tmp_path / "s.wav"), dtype=np.int16)
    assert rate == 8000 and np.array_equal(back, stereo)
    tablio.save_object(str(tmp_path / "m.mat"), np.ones((2, 3), np.float32))
    assert tablio.load_object(str(tmp_path / "m.mat"), dtype=np.int16).dtype == np.float32
    assert dict(tablio.open(source, dtype=np.int16))["a_mono_16k"][1].dtype == np.int16
    with pytest.raises(tablio.UsageError, match="numpy.int16 for type 'wave' or 'auto'"):
        tablio.open(source, type="matrix", dtype=np.int16)
    for rate in (-5, 0, float("nan"), 2.0 ** 33):  # a rate its header could not hold
        with pytest.raises(tablio.UsageError, match="sample rate"):
            tablio.save_object(str(tmp_path / "bad.wav"), (rate, stereo), type="wave", dtype=np.int16)


AUTO = {  # file: the type its values read as when type= is omitted; None: the bytes cannot tell
    "double-matrix.bin.ark": ("matrix", np.float64), "float-matrix.bin.ark": ("matrix", np.float32),
    "float-matrix.txt.ark": ("matrix", np.float32), "double-vector.bin.ark": ("vector", np.float64),
    "float-vector.bin.ark": ("vector", np.float32), "float-vector.txt.ark": ("vector", np.float32),
    "wav.bin.ark": ("wave", None), "int32-vector.bin.ark": None, "int32-vector-vector.bin.ark": None,
    "int32.bin.ark": None, "float.bin.ark": None, "token.bin.ark": None, "bool.txt.ark": None,
    "float-pair-vector.bin.ark": None,
}


@pytest.mark.parametrize("name", sorted(AUTO))
def test_without_type_a_kaldi_tables_values_say_what_they_are(data, name):
    path = data / "kaldi" / "holders" / name
    if AUTO[name] is None:
        with pytest.raises(tablio.FormatError, match="pass type= for any other") as caught:
            list(tablio.open(f"ark:{path}"))
        assert caught.value.path == str(path) and caught.value.key
        return
    type_, dtype = AUTO[name]
    typed = list(tablio.open(f"ark:{path}", type=type_, dtype=dtype))
    auto = list(tablio.open(f"ark:{path}"))
    assert [k for k, _ in auto] == [k for k, _ in typed]
    for (_, a), (_, t) in zip(auto, typed):
        if type_ == "wave":
            assert a[0] == t[0] and np.array_equal(a[1], t[1])
        else:  # an empty text object, "[ ]", cannot tell a vector from a matrix: it is a 0x0 matrix
            assert a.dtype == t.dtype and (np.array_equal(a, t) or (a.size == t.size == 0 and a.shape == (0, 0)))


def test_without_type_compressed_matrices_and_scripts_read_as_matrices(data, in_folder):
    for method in range(1, 8):
        path = data / "kaldi" / "compressed" / f"cm-method{method}.bin.ark"
        assert all(np.array_equal(a, t) for (_, a), (_, t) in
                   zip(tablio.open(f"ark:{path}"), tablio.open(f"ark:{path}", type="matrix")))
    in_folder("kaldi/scp")
    table = tablio.random_access("scp:feats.scp")
    assert all(v.dtype == np.float32 and v.ndim == 2 for v in table.values())
    assert tablio.load_object("feats.ark:5").shape == table["utt1"].shape
    _, (rate, samples) = next(iter(tablio.open("scp:wav.scp")))  # a wav.scp needs no type either
    assert samples.dtype == np.float32 and samples.ndim == 2
    with pytest.raises(tablio.UsageError, match="needs its values' type"):
        tablio.writer("ark:/dev/null", type="auto")["k"] = np.zeros(2)


def test_a_truncated_wave_is_an_error_not_a_shorter_wave(tmp_path):
    samples = (np.arange(8000) % 100).astype(np.int16)
    tablio.save_object(str(tmp_path / "a.wav"), (16000, samples), type="wave", dtype=np.int16)
    whole = (tmp_path / "a.wav").read_bytes()
    (tmp_path / "cut.wav").write_bytes(whole[:len(whole) // 2 + 1])
    with pytest.raises(tablio.FormatError, match="16000 bytes of wave data, as its header says") as caught:
        tablio.load_object(str(tmp_path / "cut.wav"), type="wave")
    assert caught.value.path == str(tmp_path / "cut.wav")
    (tmp_path / "w.scp").write_text(f"a {tmp_path / 'a.wav'}\ncut {tmp_path / 'cut.wav'}\n")
    with pytest.raises(tablio.FormatError, match="a truncated file"):
        list(tablio.open(f"scp:{tmp_path / 'w.scp'}"))
    assert [k for k, _ in tablio.open(f"scp,p:{tmp_path / 'w.scp'}")] == ["a"]


def _segments_data(tmp_path, segments):
    """r1: 16 kHz mono, 20000 samples; r2: 8 kHz stereo, 8000, read through a command."""
    r1 = (np.arange(20000) % 20000 - 10000).astype(np.int16)[None, :]
    r2 = np.stack([np.arange(8000) - 4000, np.arange(8000) - 3999]).astype(np.int16)
    tablio.save_object(str(tmp_path / "r1.wav"), (16000, r1.T), type="wave", dtype=np.int16)
    tablio.save_object(str(tmp_path / "r2.wav"), (8000, r2.T), type="wave", dtype=np.int16)
    (tmp_path / "wav.scp").write_text(f"r1 {tmp_path / 'r1.wav'}\nr2 cat {tmp_path / 'r2.wav'} |\n")
    (tmp_path / "segments").write_text(segments)
    return r1.astype(np.float32), r2.astype(np.float32)


def test_segments_cut_what_extract_segments_cuts(tmp_path, capfd):
    r1, r2 = _segments_data(tmp_path, "u1 r1 0.5 1.10\nu2 r1 1.0 1.3\nu3 r1 0.2 2.0\n"
                                      "u4 r1 1.24 -1\nu5 r2 0 0.5 1\nu6 r1 1.001 1.2\n")
    # extract-segments: int32(start * rate), int32(end * rate); an end less than 0.5 s past the
    # recording is cut there (u2), more is skipped (u3), as is 0.1 s or less (u4).
    want = {"u1": (16000, r1[:, 8000:17600]), "u2": (16000, r1[:, 16000:20000]),
            "u5": (8000, r2[1:2, 0:4000]), "u6": (16000, r1[:, 16015:19200])}
    scp = f"scp:{tmp_path / 'wav.scp'}"
    got = list(tablio.open(scp, segments=tmp_path / "segments"))
    assert [k for k, _ in got] == ["u1", "u2", "u5", "u6"]
    for key, (rate, samples) in got:
        assert rate == want[key][0]
        np.testing.assert_array_equal(samples, want[key][1])
    err = capfd.readouterr().err
    assert "'u3' skipped: it ends at sample 32000, too far past the recording's 20000" in err
    assert "'u4' skipped: it is too short (min_segment_length)" in err
    # The same as a specifier option, and with extract-segments' options.
    spec = f"scp,segments={tmp_path / 'segments'}:{tmp_path / 'wav.scp'}"
    assert [k for k, _ in tablio.open(spec, type="wave")] == ["u1", "u2", "u5", "u6"]
    keys = [k for k, _ in tablio.open(scp, segments=str(tmp_path / "segments"), max_overshoot=0,
                                      min_segment_length=0.3)]
    assert keys == ["u1", "u5"]  # u2 overshoots, u6 is 0.199 s
    # By utterance: kaldiio's int16 layout too; a skipped segment is absent.
    r = tablio.random_access(scp, dtype=np.int16, segments=tmp_path / "segments")
    rate, samples = r["u5"]
    assert rate == 8000 and samples.dtype == np.int16
    np.testing.assert_array_equal(samples, want["u5"][1][0].astype(np.int16))  # mono: (samples,)
    assert "u3" not in r and "r1" not in r
    assert len(r) == 6 and r.keys()[0] == "u1"


def test_segments_extract_segments_skips_are_reported_and_left_out(tmp_path, capfd):
    _segments_data(tmp_path, "u1 r1 0 1\nu2 r9 0 1\nu3 r1 1.0 1.0\nu4 r1 x 1\n")
    scp = f"scp:{tmp_path / 'wav.scp'}"
    assert [k for k, _ in tablio.open(scp, segments=tmp_path / "segments")] == ["u1"]
    err = capfd.readouterr().err
    for said in ("line 3 ('u3 r1 1.0 1.0') skipped: empty or invalid segment", "line 4 ('u4 r1 x 1') skipped: bad start",
                 "utterance 'u2' skipped: no entry for key 'r9'"):
        assert said in err
    r = tablio.random_access(scp, segments=tmp_path / "segments")
    assert "u2" not in r and r.get("u2") is None and len(r) == 2
    assert capfd.readouterr().err.count("'u2' skipped") == 1  # once per utterance
    # A command that fails: an error naming it, or under p a skip that says why.
    (tmp_path / "wav.scp").write_text(f"r1 {tmp_path / 'r1.wav'}\nr2 {tmp_path / 'r2.wav'}\nr9 exit 3 |\n")
    reader = tablio.open(scp, segments=tmp_path / "segments")
    assert next(reader)[0] == "u1"
    with pytest.raises(tablio.StreamError, match="command exited with status 3"):
        next(reader)
    assert [k for k, _ in tablio.open(f"scp,p:{tmp_path / 'wav.scp'}", segments=tmp_path / "segments")] == ["u1"]
    assert "status 3" in capfd.readouterr().err
    (tmp_path / "segments").write_text("u1 r2 0 0.5\n")
    with pytest.raises(tablio.FormatError, match="a channel for a segment of a recording of 2 channels") as e:
        tablio.open(scp, segments=tmp_path / "segments")
    assert (e.value.path, e.value.offset, e.value.key) == (str(tmp_path / "segments"), 0, "u1")
    with pytest.raises(TypeError, match="segments= takes the path of a segments file"):
        tablio.open(scp, segments=3)
    with pytest.raises(tablio.UsageError, match="max_overshoot= is a number of seconds"):
        tablio.open(scp, segments=tmp_path / "segments", max_overshoot=-1)


def test_a_map_style_dataset_over_segments_has_the_utterances_kept(tmp_path, capfd):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    _segments_data(tmp_path, "u1 r1 0.5 1.10\nu3 r1 0.2 2.0\nu5 r2 0 0.5 1\n")
    ds = tt.TableDataset(f"scp:{tmp_path / 'wav.scp'}", segments=tmp_path / "segments", dtype=np.int16)
    assert list(ds.keys) == ["u1", "u5"] and len(ds) == 2  # u3 overshoots: skipped
    loader = torch.utils.data.DataLoader(ds, batch_size=None)
    assert [rate for rate, _ in loader] == [16000, 8000]
    spec = f"scp,segments={tmp_path / 'segments'}:{tmp_path / 'wav.scp'}"
    assert [k for k in tt.TableDataset(spec).keys] == ["u1", "u5"]
    assert len(tt.TableIterableDataset(spec)) == 2
    assert len(tt.TableIterableDataset(f"scp:{tmp_path / 'wav.scp'}", segments=tmp_path / "segments")) == 2


def test_a_wrong_number_of_dimensions_names_the_type_meant(tmp_path):
    with pytest.raises(ValueError, match=r"matrix: expected 2 dimensions, got 1 \(type=\"vector\" takes one\)"):
        tablio.save_object(str(tmp_path / "v.vec"), np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"vector: expected 1 dimensions, got 2 \(type=\"matrix\" takes two\)"):
        tablio.save_object(str(tmp_path / "m.mat"), np.ones((2, 3), np.float32), type="vector")
