"""Readers of the .expect files in tests/data (format in tests/data/CORPUS.md)."""

import numpy as np

# Kaldi expect types -> (tablio type, dtype).
KALDI_TYPES = {
    "int32": ("int32", None),
    "float": ("float", None),
    "double": ("double", None),
    "bool": ("bool", None),
    "int32-vector": ("int-vector", None),
    "int32-vector-vector": ("int-vector-vector", None),
    "int32-pair-vector": ("int-pair-vector", None),
    "token": ("token", None),
    "token-vector": ("token-vector", None),
    "float-matrix": ("matrix", np.float32),
    "double-matrix": ("matrix", np.float64),
    "float-vector": ("vector", np.float32),
    "double-vector": ("vector", np.float64),
    "wav": ("wave", None),
}


def kaldi_entries(path):
    """[(key, type, dims, values)] of a Kaldi .expect file, the entries before any '#' line."""
    entries = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("#") or line.startswith("=="):
            if entries:
                break
            continue
        if "\t" not in line:
            continue
        key, type_, dims, values = line.split("\t")
        entries.append((key, type_, dims, values.split() if values else []))
    return entries


def hex_floats(values, dtype):
    return np.array([float.fromhex(v) if "0x" in v else float(v) for v in values], dtype=dtype)


def expected_value(type_, dims, values):
    """The Python value tablio gives for an expect line."""
    base = type_.split(":")[0]
    if base == "int32":
        return int(values[0])
    if base in ("float", "double"):
        return float(hex_floats(values, np.float32 if base == "float" else np.float64)[0])
    if base == "bool":
        return values[0] == "T"
    if base == "token":
        return values[0]
    if base == "token-vector":
        return values
    if base == "int32-vector":
        return np.array([int(v) for v in values], dtype=np.int32)
    if base == "int32-pair-vector":
        return np.array([[int(x) for x in v.split(",")] for v in values], dtype=np.int32).reshape(-1, 2)
    if base == "int32-vector-vector":
        sizes = [int(s) for s in dims.split(":")[1].split(",") if s]
        flat, out = [int(v) for v in values], []
        for size in sizes:
            out.append(np.array(flat[:size], dtype=np.int32))
            flat = flat[size:]
        return out
    if base in ("float-matrix", "double-matrix", "compressed-matrix"):
        rows, cols = (int(d) for d in dims.split("x"))
        dtype = np.float64 if base == "double-matrix" else np.float32
        return hex_floats(values, dtype).reshape(rows, cols)
    if base in ("float-vector", "double-vector"):
        return hex_floats(values, np.float64 if base == "double-vector" else np.float32)
    if base == "wav":
        shape, rate = dims.split("@")
        channels, samples = (int(d) for d in shape.split("x"))
        return float(rate), np.array([float(v) for v in values], dtype=np.float32).reshape(channels, samples)
    raise ValueError(type_)


def assert_same(actual, expected):
    """Equal values; floats compared bit for bit."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, list):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray)
        assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
        assert actual.shape == expected.shape, (actual.shape, expected.shape)
        assert actual.tobytes() == expected.tobytes()
    elif isinstance(expected, float):
        assert np.float64(actual).tobytes() == np.float64(expected).tobytes(), (actual, expected)
    else:
        assert actual == expected
