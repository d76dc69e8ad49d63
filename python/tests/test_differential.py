"""One library, one answer: every type written through every entry point (the tool, Python, and a
C++ program over the library's tables) in every format, and read back through every other, gives
the same keys and values; damage gives each reader the same error, at the same place."""
import os
import re
import subprocess

import pytest
from conftest import program_environment

np = pytest.importorskip("numpy")
tablio = pytest.importorskip("tablio")

TOOL = os.environ.get("TABLIO_TOOL")
CPP = os.environ.get("TABLIO_TABLE_COPY")
pytestmark = pytest.mark.skipif(not (TOOL and CPP), reason="TABLIO_TOOL and TABLIO_TABLE_COPY name the tool and "
                                                          "the C++ copy (set by the build's tests)")

KEYS = ["utt1", "utt2", "utt3"]
ORDINALS = ["00000000", "00000001", "00000002"]


def matrix(i):
    return (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.25 - i).astype(np.float32)


# Three values of each type; numbers a text archive writes exactly.
VALUES = {
    "matrix": [matrix(i) for i in range(3)],
    "vector": [np.array([0.5, -i, 1e-3], np.float32) for i in range(3)],
    "compressed-matrix": [matrix(i) for i in range(3)],
    "int-vector": [np.array([1, -2, 3], np.int32), np.array([], np.int32), np.array([2**31 - 1], np.int32)],
    "int-vector-vector": [[[1, 2], [], [3]], [], [[-(2**31)]]],
    "int-pair-vector": [[(1, 2), (3, -4)], [], [(2**31 - 1, 0)]],
    "token": ["hello", "w\u00f6rld", "x"],
    "token-vector": [["a", "b"], [], ["c\u00e9"]],
    "int32": [7, -(2**31), 0],
    "float": [2.5, -0.125, 1e30],
    "double": [0.1, -1e300, 2.0],
    "bool": [True, False, True],
    "wave": [(16000.0, np.array([[0, 1, -2, 32767]], np.float32)),
             (8000.0, np.array([[1, 2], [3, -32768]], np.float32)),
             (16000.0, np.array([[5]], np.float32))],
    "datum": [(np.arange(12, dtype=np.uint8).reshape(3, 2, 2), 3), (np.zeros((1, 1, 1), np.uint8), -1),
              (b"\xff\xd8 not decoded", 5)],
    "example": [{"label": np.array([1], np.int64), "pixels": np.array([0.5, -1], np.float32), "name": [b"a"]},
                {"empty": np.array([], np.float32)}, {"bytes": [b"\x00\xff", b""]}],
    "bytes": [b"\x00\x01", b"", b"\n tab\t"],
}
TOOL_TYPES = {"matrix", "vector", "compressed-matrix", "int-vector", "int-vector-vector", "token", "wave",
              "datum", "example", "bytes"}
TEXT_TYPES = {"matrix", "vector", "int-vector", "int-vector-vector", "int-pair-vector", "token",
              "token-vector", "int32", "float", "double", "bool"}

# Each format: how it is written, and how it is read back.
FORMATS = {
    "ark": ("ark:{d}/t.ark", "ark:{d}/t.ark"),
    "text": ("ark,t:{d}/t.ark", "ark:{d}/t.ark"),
    "scp": ("ark,scp:{d}/t.ark,{d}/t.scp", "scp:{d}/t.scp"),
    "tfrecord": ("tfrecord,key=key:{d}/t.tfrecord", "tfrecord,key=key:{d}/t.tfrecord"),
    # Named plainly: values that are not Examples keep their keys in a "key" feature by default,
    # and every reader finds them there.
    "tfrecord-plain": ("tfrecord:{d}/t.tfrecord", "tfrecord:{d}/t.tfrecord"),
    "tfrecord-gzip": ("tfrecord,key=key,gzip:{d}/t.tfrecord", "tfrecord,key=key:{d}/t.tfrecord"),
    "tfrecord-scp": ("tfrecord,scp,key=key:{d}/t.tfrecord,{d}/t.scp", "scp,key=key:{d}/t.scp"),
    "lmdb": ("lmdb:{d}/t.lmdb", "lmdb:{d}/t.lmdb"),
    "tar": ("tar:{d}/t.tar", "tar:{d}/t.tar"),
}
# Raw payloads keep no keys in TFRecord (TensorFlow's TFRecordWriter writes them so) and have no
# Kaldi archive form: they go through record formats, under their ordinals.
BYTES_FORMATS = {"tfrecord": ("tfrecord:{d}/t.tfrecord", "tfrecord:{d}/t.tfrecord"),
                 "lmdb": FORMATS["lmdb"], "tar": FORMATS["tar"]}


def formats_of(type):
    if type == "bytes":
        return BYTES_FORMATS
    # An Example's features are its own: a "key" feature is its key only where key= says so.
    return {name: f for name, f in FORMATS.items()
            if (name != "text" or type in TEXT_TYPES) and (name != "tfrecord-plain" or type != "example")}


def cases():
    return [(t, f) for t in VALUES for f in formats_of(t)]


def keys_of(type):
    return ORDINALS if type == "bytes" else KEYS


def canonical(type, d):
    """The specifier every reader copies a table into, to be compared byte for byte."""
    return f"tfrecord:{d}/canonical.tfrecord" if type == "bytes" else f"ark:{d}/canonical.ark"


def run(*command):
    done = subprocess.run(command, capture_output=True, timeout=120,
                          env=program_environment())
    return done.returncode, done.stderr.decode(errors="replace")


def tool_copy(type, rspec, wspec):
    return run(TOOL, "copy", f"--type={type}", rspec, wspec)


def cpp_copy(type, rspec, wspec):
    return run(CPP, type, rspec, wspec)


def python_write(type, wspec, items):
    with tablio.writer(wspec, type=type) as w:
        for key, value in items:
            w[key] = value


def same(a, b):
    """Whether two values Python gives are equal, arrays and nested lists and tuples alike."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def read_python(type, rspec):
    return list(tablio.open(rspec, type=type))


@pytest.fixture
def source(tmp_path):
    """Per type: the canonical table Python writes of its values, the file's bytes, and what
    Python reads from it (compressed matrices read back decompressed)."""
    def make(type):
        d = tmp_path / "source"
        d.mkdir(exist_ok=True)
        spec = canonical(type, d)
        python_write(type, spec, zip(keys_of(type), VALUES[type]))
        path = spec.split(":", 1)[1]
        expected = read_python(type, spec)
        assert [k for k, _ in expected] == keys_of(type)
        return spec, open(path, "rb").read(), expected
    return make


@pytest.mark.parametrize("type,format", cases())
def test_every_writer_then_every_reader_gives_the_same_table(tmp_path, source, type, format):
    src, src_bytes, expected = source(type)
    wform, rform = formats_of(type)[format]
    writers = {"python": None, "cpp": cpp_copy}
    if type in TOOL_TYPES:
        writers["tool"] = tool_copy
    readers = {"cpp": cpp_copy}
    if type in TOOL_TYPES:
        readers["tool"] = tool_copy
    for writer, copy in writers.items():
        d = tmp_path / writer
        d.mkdir()
        wspec, rspec = wform.format(d=d), rform.format(d=d)
        if copy is None:
            python_write(type, wspec, zip(keys_of(type), VALUES[type]))
        else:
            status, err = copy(type, src, wspec)
            assert status == 0, f"{writer} writing {wspec}: {err}"
        got = read_python(type, rspec)
        assert [k for k, _ in got] == keys_of(type), f"python reading what {writer} wrote"
        for (key, value), (_, want) in zip(got, expected):
            assert same(value, want), f"python reading {key} of what {writer} wrote to {format}"
        for reader, copy_back in readers.items():
            out = tmp_path / f"{writer}-{reader}"
            out.mkdir()
            status, err = copy_back(type, rspec, canonical(type, out))
            assert status == 0, f"{reader} reading what {writer} wrote to {wspec}: {err}"
            back = canonical(type, out).split(":", 1)[1]
            assert open(back, "rb").read() == src_bytes, f"{reader} reading what {writer} wrote to {format}"


TFRECORD_TYPES = [t for t in VALUES if t != "bytes"]


@pytest.mark.parametrize("type", TFRECORD_TYPES)
def test_tfrecord_values_are_examples_tensorflow_reads_whoever_writes(tmp_path, source, type):
    """Not Examples by nature, a type's values are written as Examples of its form (a "shape" and
    a "data" feature) by every writer: the same records, byte for byte."""
    src, _, _ = source(type)
    files = {}
    # Keys kept by default, but in Examples, whose "key" feature is named (key=key).
    options = "tfrecord,key=key" if type == "example" else "tfrecord"
    python_write(type, f"{options}:{tmp_path}/python.tfrecord", zip(KEYS, VALUES[type]))
    files["python"] = tmp_path / "python.tfrecord"
    assert cpp_copy(type, src, f"{options}:{tmp_path}/cpp.tfrecord")[0] == 0
    files["cpp"] = tmp_path / "cpp.tfrecord"
    if type in TOOL_TYPES:
        assert tool_copy(type, src, f"{options}:{tmp_path}/tool.tfrecord")[0] == 0
        files["tool"] = tmp_path / "tool.tfrecord"
    contents = {name: path.read_bytes() for name, path in files.items()}
    assert len(set(contents.values())) == 1, f"{type}: writers disagree"
    for key, example in tablio.open(f"tfrecord:{files['python']}", type="example"):
        assert example["key"][0].decode() in KEYS
        if type != "example":
            assert "data" in example


def test_every_entry_point_keeps_and_finds_keys_by_default_and_numbers_records_that_keep_none(tmp_path, source):
    src, _, expected = source("matrix")
    assert tool_copy("matrix", src, f"tfrecord:{tmp_path}/tool.tfrecord")[0] == 0
    for rspec in (f"tfrecord:{tmp_path}/tool.tfrecord", f"tfrecord,key=key:{tmp_path}/tool.tfrecord"):
        got = read_python("matrix", rspec)
        assert [k for k, _ in got] == KEYS and all(same(a, b) for (_, a), (_, b) in zip(got, expected))
        assert [k for k, _ in tablio.random_access(rspec, type="matrix").items()] == KEYS
    # Records of the matrix form with no key feature (as TensorFlow programs write them) are
    # numbered by every reader.
    forms = [(k, {f: v for f, v in e.items() if f != "key"})
             for k, e in tablio.open(f"tfrecord,key=key:{tmp_path}/tool.tfrecord", type="example")]
    python_write("example", f"tfrecord:{tmp_path}/numbered.tfrecord", zip(ORDINALS, (e for _, e in forms)))
    got = read_python("matrix", f"tfrecord:{tmp_path}/numbered.tfrecord")
    assert [k for k, _ in got] == ORDINALS and all(same(a, b) for (_, a), (_, b) in zip(got, expected))
    assert tool_copy("matrix", f"tfrecord:{tmp_path}/numbered.tfrecord", f"ark,t:{tmp_path}/tool.txt")[0] == 0
    assert cpp_copy("matrix", f"tfrecord:{tmp_path}/numbered.tfrecord", f"ark,t:{tmp_path}/cpp.txt")[0] == 0
    text = (tmp_path / "tool.txt").read_bytes()
    assert text == (tmp_path / "cpp.txt").read_bytes()
    assert [line.split()[0] for line in text.decode().splitlines() if "[" in line] == ORDINALS
    # A copy of such a table to TFRecord adds no keys: the records come out as they went in.
    for name, copy in {"tool": tool_copy, "cpp": cpp_copy}.items():
        assert copy("matrix", f"tfrecord:{tmp_path}/numbered.tfrecord", f"tfrecord:{tmp_path}/{name}.again")[0] == 0
        assert (tmp_path / f"{name}.again").read_bytes() == (tmp_path / "numbered.tfrecord").read_bytes(), name
    tablio.shard(f"tfrecord:{tmp_path}/numbered.tfrecord", f"tfrecord:{tmp_path}/py.again", 1, type="matrix")
    assert (tmp_path / "py-00000-of-00001.again").read_bytes() == (tmp_path / "numbered.tfrecord").read_bytes()


def test_examples_keep_a_key_feature_of_their_own_unless_key_is_named(tmp_path):
    """A dataset's Examples with a "key" feature of their own (here with spaces, which no table key
    has) are copied whole by every entry point; key=key takes it out as the key where asked."""
    own = [{"key": [b"a b"], "label": np.array([1], np.int64)}, {"key": [b"c d"], "label": np.array([2], np.int64)}]
    data = f"tfrecord:{tmp_path}/own.tfrecord"
    python_write("example", data, zip(ORDINALS[:2], own))
    for name, copy in {"tool": tool_copy, "cpp": cpp_copy}.items():
        status, err = copy("example", data, f"tfrecord:{tmp_path}/{name}.tfrecord")
        assert status == 0, (name, err)
        assert (tmp_path / f"{name}.tfrecord").read_bytes() == (tmp_path / "own.tfrecord").read_bytes(), name
    got = read_python("example", data)
    assert [k for k, _ in got] == ORDINALS[:2] and [e["key"] for _, e in got] == [[b"a b"], [b"c d"]]
    status, err = tool_copy("example", f"tfrecord,key=key:{tmp_path}/own.tfrecord", f"ark:{tmp_path}/own.ark")
    assert status != 0 and "a b" in err  # no key has a space, as Kaldi's tables say


def kaldi_binary_object(m, folder):
    """Kaldi's binary object of a float matrix ("\\0BFM ..."), as WriteKaldiObject writes it."""
    tablio.save_object(f"{folder}/object.mat", m, type="matrix")
    return (folder / "object.mat").read_bytes()


def test_tfrecord_files_of_kaldi_objects_still_read_everywhere(tmp_path, source):
    """Records holding a type's own binary object, as earlier writers put in TFRecord, read as before."""
    src, src_bytes, expected = source("matrix")
    old = f"tfrecord:{tmp_path}/old.tfrecord"
    python_write("bytes", old, zip(ORDINALS, (kaldi_binary_object(m, tmp_path) for m in VALUES["matrix"])))
    got = read_python("matrix", old)
    assert [k for k, _ in got] == ORDINALS and all(same(a, b) for (_, a), (_, b) in zip(got, expected))
    for reader, copy in {"tool": tool_copy, "cpp": cpp_copy}.items():
        status, err = copy("matrix", old, f"ark,t:{tmp_path}/{reader}.txt")
        assert status == 0, (reader, err)
    assert (tmp_path / "tool.txt").read_bytes() == (tmp_path / "cpp.txt").read_bytes()


ERROR_PLACE = re.compile(r"at byte (\d+)")


@pytest.mark.parametrize("type", ["matrix", "datum", "example"])
def test_a_damaged_record_is_the_same_error_at_the_same_place_for_every_reader(tmp_path, source, type):
    src, _, _ = source(type)
    path = tmp_path / "t.tfrecord"
    python_write(type, f"tfrecord,key=key:{path}", zip(KEYS, VALUES[type]))
    raw = bytearray(path.read_bytes())
    raw[-6] ^= 0x40  # inside the last record's data: its CRC no longer matches
    path.write_bytes(bytes(raw))
    rspec = f"tfrecord,key=key:{path}"
    messages = {}
    with pytest.raises(tablio.FormatError) as python_error:
        read_python(type, rspec)
    messages["python"] = str(python_error.value)
    for reader, copy in {"tool": tool_copy, "cpp": cpp_copy}.items():
        out = tmp_path / reader
        out.mkdir()
        status, messages[reader] = copy(type, rspec, canonical(type, out))
        assert status != 0, reader
    places = {reader: ERROR_PLACE.findall(message) for reader, message in messages.items()}
    assert all(places.values()), messages
    assert len({p[0] for p in places.values()}) == 1, messages
    for reader, message in messages.items():
        assert "t.tfrecord" in message and "CRC" in message, (reader, message)
        # The record's key is in the record: the error claims none (no stand-in ordinal).
        assert "key '" not in message, (reader, message)
    assert python_error.value.key is None and python_error.value.offset == int(places["python"][0])
