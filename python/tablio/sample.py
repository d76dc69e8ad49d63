"""WebDataset samples: the members of a tar shard that share a key, as one value.

A tar table read with type="sample" gives each sample as {extension: bytes}, in member order
("000017.jpg", "000017.cls" -> {"jpg": b"...", "cls": b"3"}). decode=True (in tablio.open,
tablio.random_access, tablio.load and the torch datasets) decodes the conventional
extensions as WebDataset's basic handlers do, by the part of the extension after its last
'.': cls, cls2, class, count, index, inx, id -> int; txt, text, transcript -> str; json,
jsn -> object; npy -> ndarray; npz -> {name: ndarray}. Other members (images, pickles)
stay bytes unless decode names a decoder for them: decode={"jpg": to_image} adds to the
conventional ones (and can replace them).

Writing (type="sample") takes a mapping: bytes as they are, and otherwise what
encode_member makes of a value.
"""

import io
import json
import zipfile

import numpy as np

import tablio
from . import _tablio
from .errors import excerpt, key_excerpt

__all__ = ["decode", "decoder", "encode_member"]

_INT = ("cls", "cls2", "class", "count", "index", "inx", "id")
_TEXT = ("txt", "text", "transcript")
_JSON = ("json", "jsn")


def _bounds(limits):
    """(bytes, expansion) an npz member may inflate to, from limits= and the process's policy
    (its untrusted limits: 256 MiB, 100 times), as the C++ library bounds what it inflates."""
    limits = limits or {}
    untrusted = _tablio.process_policy()[0]
    most = min(limits.get("record_bytes") or 1 << 32, 1 << 28 if untrusted else 1 << 32)
    expansion = [x for x in (limits.get("expansion"), 100 if untrusted else None) if x]
    return most, min(expansion) if expansion else None


class _PastLimits(ValueError):
    """A member that would inflate past the limits."""


def _npz(data, bounds=(1 << 32, None)):
    # An npz is a zip: what its members claim to inflate to is checked before anything inflates
    # (a member cannot give more than it claims).
    most, expansion = bounds
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        claimed = sum(member.file_size for member in archive.infolist())
    if claimed > most or (expansion and claimed > expansion * len(data) + (1 << 20)):
        raise _PastLimits(f"members that claim {claimed} bytes from {len(data)}, past the limits (record_bytes, "
                          "expansion)")
    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        return {name: arrays[name] for name in arrays.files}


def _conventional(bounds=(1 << 32, None)):
    table = {ext: (lambda data: int(data)) for ext in _INT}
    table.update({ext: (lambda data: data.decode("utf-8")) for ext in _TEXT})
    table.update({ext: json.loads for ext in _JSON})
    table["npy"] = lambda data: np.load(io.BytesIO(data), allow_pickle=False)
    table["npz"] = lambda data: _npz(data, bounds)
    return table


CONVENTIONAL = _conventional()


def _kind(extension):
    return extension.rsplit(".", 1)[-1].lower()


def decoder(decode, limits=None):
    """A function that decodes a sample's members as decode= asks: None or False, nothing;
    True, the conventional extensions; a dict {extension: function(bytes)}, those and the
    conventional ones. limits (as open() takes them) bound what an npz may inflate to."""
    if decode is None or decode is False:
        return None
    table = _conventional(_bounds(limits))
    if isinstance(decode, dict):
        for ext, function in decode.items():
            if not callable(function):
                raise tablio.UsageError(f"decode[{ext!r}] is not a function of the member's bytes")
            table[ext.lower()] = function
    elif decode is not True:
        raise tablio.UsageError("decode is True or a dict of extension to a function of the member's bytes")

    def decode_sample(sample, key=None, path=None):
        out = {}
        for ext, data in sample.items():
            function = table.get(ext.lower()) or table.get(_kind(ext))
            if function is None:
                out[ext] = data
                continue
            try:
                out[ext] = function(data)
            except Exception as e:
                # The place in the message too: an error re-made from its message (in a
                # DataLoader worker) keeps it.
                # At most 16 characters of the key and of what the decoder said (which may quote
                # the member's bytes), as every message quotes input.
                # A limit the member passed says so whole: it quotes no input.
                shown = key_excerpt(key)
                where = f"format error in '{path}' (key '{shown}')" if path else f"sample '{shown}'"
                said = str(e) if isinstance(e, _PastLimits) else f"{type(e).__name__}: {excerpt(e)}"
                raise tablio.FormatError(f"{where}: expected a member .{ext} that decodes as .{_kind(ext)}, found "
                                         f"{said}", path, None, key) from e
        return out

    return decode_sample


def decode(sample, decode=True):
    """One sample ({extension: bytes}) decoded as decoder(decode) decodes."""
    return decoder(decode)(sample)


def encode_member(extension, value):
    """The bytes of one member: bytes-like as they are; str as UTF-8; an int (cls, index...)
    in decimal; for json/jsn, any JSON value; for npy, an ndarray in NumPy's format."""
    kind = _kind(extension)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if kind in _JSON:
        return json.dumps(value).encode()
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return str(int(value)).encode()
    if isinstance(value, np.ndarray) and kind == "npy":
        out = io.BytesIO()
        np.save(out, value, allow_pickle=False)
        return out.getvalue()
    raise TypeError(f"member .{extension}: no conventional encoding of {type(value).__name__} "
                    "(give bytes, str, int, a JSON value for .json or an ndarray for .npy)")


class DecodedTable:
    """A table reader of samples whose values come decoded (what open(..., decode=) returns):
    everything else is the reader's."""

    def __init__(self, table, decode_sample, path=None):
        self._table, self._path = table, path
        self._decode = lambda value, key: decode_sample(value, key, path)

    def __getattr__(self, name):
        return getattr(self._table, name)

    def __iter__(self):
        return self

    def __next__(self):
        key, value = next(self._table)
        return key, self._decode(value, key)

    def _batch(self, n):
        keys, values = self._table._batch(n)
        return keys, [self._decode(v, k) for k, v in zip(keys, values)]

    def batches(self, n):
        while True:
            keys, values = self._batch(n)
            if not keys:
                return
            yield keys, values

    def __getitem__(self, key):
        return self._decode(self._table[key], key)

    def get(self, key, default=None):
        value = self._table.get(key)
        return default if value is None else self._decode(value, key)

    def lookup(self, keys):
        return [self._decode(v, k) for k, v in zip(keys, self._table.lookup(keys))]

    def __contains__(self, key):
        return key in self._table

    def __len__(self):
        return len(self._table)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._table.__exit__(*exc)


class DecodedMapping(DecodedTable):
    """A random-access table of samples whose values come decoded: iterating it gives keys."""

    def __iter__(self):
        return iter(self._table.keys())

    def __next__(self):
        raise TypeError("a random-access table is iterated for its keys")
