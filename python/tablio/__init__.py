"""tablio: Kaldi archives and scripts, TFRecord, Caffe LMDB, IDX and tar shards as numpy.

Tables are named by Kaldi-style specifiers, as in the C++ library::

    import tablio
    with tablio.open("ark:feats.ark", type="matrix") as feats:
        for key, matrix in feats:          # matrix: float32 ndarray (rows, cols)
            ...
    lengths = tablio.random_access("scp:feats.scp", type="matrix")
    with tablio.writer("ark,scp:out.ark,out.scp", type="matrix") as out:
        out["utt1"] = matrix

Value types (``type=``): see ``tablio.value_types()``.
"""

import collections.abc as _abc
import operator as _operator
import os as _os
import sys as _sys
import warnings as _warnings

from . import errors, _transforms
from .errors import AccessError, DataLossError, FormatError, StreamError, UsageError
from . import _tablio
from ._tablio import RandomAccessReader, SequentialReader, Writer

__version__ = _tablio.__version__  # the version of the C++ headers the module was built from

__all__ = [
    "open", "random_access", "writer", "load", "load_object", "save_object", "shard", "messages", "value_types",
    "idx",
    "shard_index", "sample",
    "set_untrusted", "process_policy", "transform_draw",
    "SequentialReader", "RandomAccessReader", "Writer",
    "FormatError", "DataLossError", "UsageError", "AccessError", "StreamError",
]


def _batches(self, n):
    """Yields (keys, values) for up to n entries at a time, read in one call without the GIL.

    Values of one shape are stacked: matrices into an (N, rows, cols) array, vectors into
    (N, dim), a Datum's images into (N, c, h, w) with an (N,) label array, an Example's
    fixed-length features into (N, count) arrays, and bytes features of one count and length
    into (N, count, length) uint8 arrays (of decode_raw's type when it names them). Values
    that differ come as lists.
    """
    try:
        count = _operator.index(n)  # an int, or a numpy integer
    except TypeError:
        count = 0
    if isinstance(n, bool) or count < 1:
        raise UsageError(f"batches(n): n is a number of entries, 1 or more, not {n!r}")
    count = min(count, _sys.maxsize)  # more than any table holds: all of it

    def batches():
        while True:
            keys, values = self._batch(count)
            if not keys:
                return
            yield keys, values
    return batches()


SequentialReader.batches = _batches


def _value_type(spec, type):
    """type, or for a Kaldi table (ark, scp) given none, "auto": each value's type from its
    header; other tables read matrices unless told."""
    if type is not None:
        return type
    options = spec.partition(":")[0].replace(" ", ",").split(",")
    return "auto" if "ark" in options or "scp" in options else "matrix"


def _specifier(spec, function):
    """spec, checked to be a specifier string: a TypeError that says what is accepted otherwise."""
    if isinstance(spec, str):
        return spec
    if hasattr(spec, "read") or hasattr(spec, "write"):
        name = getattr(spec, "name", None)
        hint = f", e.g. 'ark:{name}'" if isinstance(name, str) else ""
        what = f"a file object ({type(spec).__name__}); name its file in a specifier instead{hint}"
    else:
        what = f"{type(spec).__name__} {spec!r}"[:80]
    raise TypeError(f"tablio.{function}() takes a specifier, a str such as 'ark:feats.ark', "
                    f"'scp:feats.scp' or 'tfrecord:train.tfrecord', not {what}")


def _check_threads(threads):
    """Refuses a threads= that is neither None nor a number of threads, 1 to 256."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or
                                not 1 <= threads <= 256):
        raise UsageError(f"threads is a number of threads, 1 to 256, not {threads!r}"[:120])


def _threaded(spec, threads):
    """spec with threads=N among its options; threads None, or a threads=N of its own, leaves it."""
    _check_threads(threads)
    if threads is None:
        return spec
    options, colon, rest = spec.partition(":")
    if not colon or any(o.startswith("threads=") for o in options.split(",")):
        return spec  # no specifier (the table says so), or the specifier's own threads=N
    return f"{options},threads={threads}:{rest}"


_IMAGE_TYPES = ("sample", "datum", "example")


def _images(images, type, scale=None):
    """images= as the readers take it: (channels, width, height, channels_first, bgr, features,
    transform), or None. A Datum's images come as Caffe's data layer gives them, (C, H, W) in B, G, R with
    the channels stored, unless asked otherwise; an Example's are its "image/encoded" feature unless features= names
    others."""
    if images is None or images is False:
        return None
    if type not in _IMAGE_TYPES:
        raise UsageError(f"images= applies to types {', '.join(map(repr, _IMAGE_TYPES))}, not {type!r}")
    given = {} if images is True else images
    allowed = ({"channels", "draft", "channels_first", "bgr"} | set(_transforms.KEYS)
               | ({"features"} if type == "example" else set()))
    if not isinstance(given, dict) or set(given) - allowed:
        raise UsageError(f"images= is True or a dict of {', '.join(sorted(allowed))} for type {type!r}, "
                         f"not {images!r}"[:240])
    channels = given.get("channels", 3)
    draft = given.get("draft") or (0, 0)
    if channels not in (0, 1, 3) or isinstance(channels, bool):
        raise UsageError(f"images: channels is 3 (RGB), 1 (gray) or 0 (as stored), not {channels!r}")
    if (not isinstance(draft, (tuple, list)) or len(draft) != 2
            or not all(isinstance(d, int) and not isinstance(d, bool) and 0 <= d < 2**31 for d in draft)):
        raise UsageError(f"images: draft is (width, height), the least size a JPEG is scaled down to, not {draft!r}")
    features = given.get("features", ["image/encoded"])
    if isinstance(features, (str, bytes)) or not all(isinstance(f, str) for f in features):
        raise UsageError(f"images: features is a list of feature names, such as [\"image/encoded\"], not {features!r}")
    caffe = type == "datum"
    channels = given.get("channels", 0 if caffe else 3)  # Caffe's data layer decodes as stored
    try:
        transform = _transforms.parse(given, channels)
    except ValueError as e:
        raise UsageError(f"images: {e}"[:400]) from None
    if transform is not None and scale is not None:
        raise UsageError("images: give the transform's own scale (Caffe's) or mean and std (torchvision's), "
                         "not scale=")
    # torchvision's transforms end in tensors, (C, H, W)
    channels_first = given.get("channels_first", caffe or transform is not None)
    return (channels, draft[0], draft[1], bool(channels_first), bool(given.get("bgr", caffe)), tuple(features),
            transform)


def transform_draw(images, width, height, key, type="sample"):
    """What images='s transform draws for the record of `key` whose decoded image is width x
    height, as the table draws it: {"box": (left, top, width, height), "flip": bool}. The box is
    the crop: of the decoded image for random_resized_crop and Caffe's crop_size, of the resized
    image for center_crop (left and top below 0 where it pads), else the whole image. Draws
    depend on the transform's seed and the key alone; a TableIterableDataset gives each epoch
    and table a seed of its own."""
    transform = _images(images, type)[6] if images else None
    if transform is None:
        raise UsageError("transform_draw: images= names no transform")
    for name, size in (("width", width), ("height", height)):
        if isinstance(size, bool) or not isinstance(size, int) or not 0 < size < 2**31:
            raise UsageError(f"transform_draw: {name} is a number of pixels, 1 or more, not {size!r}")
    left, top, w, h, flip = _tablio.transform_draw(transform, width, height, key)
    return {"box": (left, top, w, h), "flip": flip}


_ABSENT = object()


class _Items(_abc.ItemsView):
    """A random-access table's (key, value) pairs in the order of keys(); under 'p', a key
    whose value cannot be read is left out, as it is absent at lookup."""

    def __iter__(self):
        for key in self._mapping.keys():
            value = self._mapping.get(key, _ABSENT)
            if value is not _ABSENT:
                yield key, value


class _Values(_abc.ValuesView):
    """A random-access table's values in the order of keys() (see _Items)."""

    def __iter__(self):
        return (value for _, value in _Items(self._mapping))


def _as_mapping(cls):
    """Makes a random-access table class a collections.abc.Mapping: items() and values() as
    views, beside the keys(), get(), len() and `in` it has."""
    cls.items = lambda self: _Items(self)
    cls.values = lambda self: _Values(self)
    _abc.Mapping.register(cls)


def _decoded(table, type, decode, rspec, limits=None):
    """The table, or its samples decoded as decode= asks (tablio.sample)."""
    if decode is None or decode is False:
        return table
    if type != "sample":
        table.close()
        raise UsageError(f"decode= applies to type 'sample', not '{type}'")
    decoded = sample.DecodedMapping if isinstance(table, RandomAccessReader) else sample.DecodedTable
    return decoded(table, sample.decoder(decode, limits), rspec.partition(":")[2])


def _segments(segments, max_overshoot, min_segment_length):
    """What the readers take for segments=: (file, max_overshoot, min_segment_length), each
    None where not given (the specifier's own then apply), or None for none of them."""
    if segments is None and max_overshoot is None and min_segment_length is None:
        return None
    if segments is not None and not isinstance(segments, (str, _os.PathLike)):
        raise TypeError(f"segments= takes the path of a segments file (str or os.PathLike), not "
                        f"{type(segments).__name__}")
    for name, value in (("max_overshoot", max_overshoot), ("min_segment_length", min_segment_length)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0):
            raise UsageError(f"{name}= is a number of seconds, at least 0, not {value!r}")
    return (None if segments is None else _os.fspath(segments),
            None if max_overshoot is None else float(max_overshoot),
            None if min_segment_length is None else float(min_segment_length))


def _segments_type(rspec, segments, type):
    """The value type of a table cut by a segments file (segments=, or the specifier's option):
    waves, or their bytes."""
    if segments is None and not any(o.startswith("segments=") for o in rspec.partition(":")[0].split(",")):
        return type
    if type not in (None, "wave", "bytes"):
        raise UsageError(f"segments= gives waves: type 'wave' (the default with segments=) or 'bytes', not {type!r}")
    return type or "wave"


def open(rspec, type=None, dtype=None, scale=None, decode_raw=None, view=False, features=None,
         allow_network=True, allow_pipes=True, decode=None, confine=None, limits=None, segments=None,
         max_overshoot=None, min_segment_length=None, threads=None, images=None):
    """Opens a table for reading in order: iterate it for (key, value) pairs.

    rspec: a Kaldi rspecifier, e.g. "ark:feats.ark", "scp:feats.scp", "ark,p:gunzip -c x.gz |",
        "tfrecord:train-*-of-00016.tfrecord", "lmdb:mnist_train_lmdb", "idx:images-idx3-ubyte",
        "tar:shard-%06d.tar". Options ("p", "s", "cs", "o", ...) as Kaldi takes them.
    type: the value type, one of value_types(): "matrix", "vector", "compressed-matrix",
        "int-vector", "int-vector-vector", "int-pair-vector", "token", "token-vector",
        "int32", "float", "double", "bool", "wave", "example", "sequence-example", "datum",
        "bytes", "sample" (a tar table's WebDataset samples: {extension: bytes} per key).
        Omitted, a Kaldi table (ark, scp) is read as "auto": each value's type from its own
        header, as kaldiio reads them, in the precision stored (FM, CM: float32 matrices; DM:
        float64; FV, DV: vectors; RIFF: waves; int32 vectors; text in [ ]), and a value whose
        bytes cannot tell (int-vector-vector, tokens, numbers) is a FormatError asking for
        type=; any other table is read as "matrix".
    dtype: numpy.float32 (default) or numpy.float64 for matrices and vectors; values stored
        in the other precision are converted, as Kaldi converts them.
    features: for type "example", the names of the features to read, as a feature description
        names them for TensorFlow's parse_example (e.g. ["image_raw", "label"]): the others are
        skipped, not converted. A record that lacks one has no entry for it.
    decode_raw: for type "example", {feature name: numpy dtype}: those bytes features come as
        arrays of little-endian numbers, one row per value, as TensorFlow's decode_raw gives
        them (e.g. {"image_raw": numpy.uint8}); a subarray dtype, (numpy.uint8, (28, 28)),
        also gives each value's shape.
    scale: for type "datum" and for decode_raw features, images come as float32 arrays of
        each number times scale (as Caffe's transform_param scale, e.g. 1/255), converted in
        the pass that reads them.
    view: for types "example" and "sequence-example", a record's arrays and bytes are
        read-only views into one buffer made for the record (bytes as memoryviews), rather
        than an object each: one allocation per record, however many features. The views
        keep the buffer alive, so they stay valid after the next record.
    allow_network, allow_pipes: False refuses remote objects (http://, https://, s3://) or
        commands ("cmd |"), for specifiers that come from untrusted input.
    confine: a folder (str or path) that every local name the table reaches (its files, the
        lines of a script, the shards of a pattern) must resolve inside, symbolic links
        followed, as a regular file: no command, no standard input, no device (AccessError).
    limits: bounds of what reading may take, a dict of any of record_bytes (one record or
        object), element_count (one container), token_bytes (a key or a word), total_bytes
        (all one input delivers), expansion (how many times its compressed size a
        compressed input may inflate) and table_expansion (how many times the bytes of the
        files it names the table may read in all: a script's lines that point again and again
        at the same bytes); the process's untrusted policy tightens them further.
        For remote objects also request_deadline and stream_deadline, in seconds (0: none):
        how long one request with its retries, and all one object's transfers, may take.
    decode: for type "sample", True decodes the conventional extensions (cls -> int, txt ->
        str, json -> object, npy -> ndarray...); a dict {extension: function(bytes)} adds
        decoders (tablio.sample).
    segments: a Kaldi segments file (str or path; lines "utterance recording start end
        [channel]") over a table of recordings (a wav.scp): the table read is then its
        utterances, in the file's order, each the samples Kaldi's extract-segments cuts
        (type "wave"); max_overshoot and min_segment_length are extract-segments' options, in
        seconds (0.5 and 0.1, or what the specifier's options of those names say). Segments it
        skips are reported on standard error, once each, and left out.
    threads: entries decoded ahead by this many threads (the specifier's threads=N), handed
        out in the same order with the same errors: for tables whose records cost more to
        decode than to read (Examples, Datums, samples, images); docs/threads.md.
    images: True decodes JPEG and PNG images to uint8 arrays with the pixels Pillow gives for
        Image.open(f).convert("RGB"), in the table's threads: for type "sample" the image
        members (extensions jpg, jpeg, png, or ending in them), (H, W, 3); for type "datum" an
        encoded Datum's image (convert_imageset --encoded), (C, H, W) in B, G, R with the
        channels stored, as Caffe's data layer gives it; for type "example" the "image/encoded" feature, (H, W, 3). A dict
        sets channels (3, 1 for gray images, 0 as stored), draft ((width, height): a JPEG
        decoded scaled down by 1/2, 1/4 or 1/8 in its DCT while at least that size, as Pillow's
        Image.draft), channels_first ((3, H, W)), bgr (B, G, R, as OpenCV and Caffe give them)
        and, for Examples, features (the names of the features holding images). docs/images.md.
    Under the "p" option a bad entry ends the table quietly; the reader's .error says why.
    Raises FormatError (with .path, .offset, .key), OSError, UsageError or AccessError.
    """
    type = _value_type(_specifier(rspec, "open"), _segments_type(rspec, segments, type))
    if shard_index.named_by(rspec) is not None:
        raise UsageError(f"'{rspec}' names a shard index, which random_access() looks keys up through and "
                         "tablio.torch's datasets plan epochs with; to read its shards in order, open "
                         "each of index.rspecs() with **index.options(), for index = tablio.shard_index.load(PATH_OR_URL)")
    return _decoded(SequentialReader(_threaded(rspec, threads), type, dtype, scale, decode_raw, view, features,
                                     allow_network, allow_pipes, confine, limits,
                                     _segments(segments, max_overshoot, min_segment_length), _images(images, type, scale)),
                    type, decode, rspec, limits)


def messages(rspec, message_class, batch_size=None, **options):
    """The records of a table as protocol buffers messages of a protoc-generated class.

    Yields (key, message) for each record or, with batch_size, (keys, messages) for up to that
    many records at a time, read in one call. The records are the table's bytes values
    (open(rspec, type="bytes", **options)): those C++ wrote with holder<T, tablio::protobuf>,
    or any others that hold one message each. A record that does not parse is a FormatError
    with the record's key and, as its path, the specifier (its offset is None: protobuf parses
    the record's bytes).
    """
    parse = message_class.FromString
    name = message_class.DESCRIPTOR.full_name

    def message(key, record):
        try:
            return parse(record)
        except Exception as e:  # DecodeError, or the warning of a parse cut short made an error
            raise FormatError(f"format error in '{rspec}' (key '{errors.key_excerpt(key)}'): expected a {name} "
                              f"message, found bytes that do not parse ({e})", path=rspec, key=key) from None

    def parsed(keys, records):
        # protobuf's C++ backend stops at a stray end-group tag with a RuntimeWarning and the
        # part before it: an error here. (Filters are the process's: set only while parsing.)
        with _warnings.catch_warnings():
            _warnings.simplefilter("error", RuntimeWarning)
            return [message(k, r) for k, r in zip(keys, records)]

    def read():
        with open(rspec, type="bytes", **options) as table:
            if batch_size is None:
                for key, record in table:
                    yield key, parsed((key,), (record,))[0]
            else:
                for keys, records in table.batches(batch_size):
                    yield keys, parsed(keys, records)
    return read()


def random_access(rspec, type=None, dtype=None, scale=None, decode_raw=None, view=False,
                  features=None, allow_network=True, allow_pipes=True, decode=None, confine=None, limits=None,
                  segments=None, max_overshoot=None, min_segment_length=None, images=None):
    """Opens a table for lookup by key, a collections.abc.Mapping: r[key] (KeyError when
    absent), key in r, r.get(key), len(r), r.keys() (a list, in table order), r.items() and
    r.values(); r.lookup(keys) gives the values of many keys in one call. Values are copies
    that stay valid. A script's keys are its lines, read without reading a value; under
    "p", a key whose value cannot be read is absent at lookup (in is False, r[key] raises
    KeyError, items() and values() leave it out), while keys() and len() still count it.
    dtype, scale, decode_raw, view, features, allow_network, allow_pipes, decode, confine,
    limits, segments, max_overshoot and min_segment_length as open() takes them; with
    segments, keys() and len() count every segment, and one extract-segments skips is absent.

    rspec "index:PATH_OR_URL" looks keys up through a shard index (tablio.shard_index): a
    shard is opened only when a lookup needs it, the one whose key range holds the key in an
    index of sorted shards (as tablio writes them); len(r) comes from the index, r.keys()
    opens every shard, and r.at(i) gives the i-th record's (key, value), opening only its
    shard."""
    type = _value_type(_specifier(rspec, "random_access"), _segments_type(rspec, segments, type))
    if (named := shard_index.named_by(rspec)) is not None:
        if segments is not None:
            raise UsageError("segments= cuts a table of recordings, not a shard index")
        index = shard_index.load(named, allow_network, allow_pipes, confine, limits)
        index.check_reads(type)
        return _lookup.IndexedTable(index, lambda spec: random_access(  # a shard is never a command
            spec, type, dtype, scale, decode_raw, view, features, decode=decode, images=images, **index.options()))
    return _decoded(RandomAccessReader(rspec, type, dtype, scale, decode_raw, view, features, allow_network,
                                       allow_pipes, confine, limits,
                                       _segments(segments, max_overshoot, min_segment_length), _images(images, type, scale)),
                    type, decode, rspec, limits)


def writer(wspec, type="matrix", dtype=None, compression_method=None, allow_network=True, allow_pipes=True,
           confine=None, threads=None):
    """Opens a table for writing: w[key] = value, or w.write(key, value).

    wspec: a Kaldi wspecifier, e.g. "ark:out.ark", "ark,scp:out.ark,out.scp",
        "ark:| gzip -c > out.ark.gz", "tfrecord,gz:out.tfrecord", "lmdb:out_lmdb",
        "tar:shard-%06d.tar".
    dtype: numpy.float64 writes matrices and vectors in double precision (Kaldi's "DM", "DV");
        the default, numpy.float32, writes them as Kaldi's BaseFloat tables do ("FM", "FV").
    compression_method: for type "matrix" or "compressed-matrix", Kaldi's CompressionMethod
        (1 to 7) to store matrices compressed, as copy-feats --compress does.
    wspec may name an s3:// object: it is uploaded in parts as it is written and appears only
    when close() has succeeded.
    close() raises when anything was not written (a full disk, a failed command); a writer
    that is dropped unclosed is closed then, with a RuntimeWarning instead of an exception.
    Leaving a with-block by an exception, or abandon(), gives the table up instead: an object
    being uploaded never appears (files keep what was written).
    allow_network, allow_pipes and confine as open() takes them (confine: the files written).
    threads: values encoded behind the writer by this many threads (the specifier's threads=N),
        written in order, byte for byte as one thread writes them; docs/threads.md.
    """
    return Writer(_threaded(_specifier(wspec, "writer"), threads), type, dtype, compression_method, allow_network, allow_pipes, confine)


def load(rspec, type=None, dtype=None, scale=None, decode_raw=None, features=None, allow_network=True,
         allow_pipes=True, decode=None, confine=None, limits=None, threads=None, images=None):
    """Reads a whole table in one call: (keys, values), values stacked as batches() stacks them."""
    with open(rspec, type, dtype, scale, decode_raw, False, features, allow_network, allow_pipes,
              decode, confine, limits, threads=threads, images=images) as table:
        return table._batch(_sys.maxsize)


def load_object(rxfilename, type=None, dtype=None, allow_network=True, allow_pipes=True, confine=None,
                limits=None):
    """One object with no key, as Kaldi's ReadKaldiObject reads it (kaldiio's load_mat):
    "cmvn.mat", an object in an archive at a byte offset, "feats.ark:15", with a range,
    "feats.ark:15[0:9,2:5]" (rows, then columns; matrices and vectors), or a command's output,
    "copy-feats ark:a.ark:15 - |", read as it arrives (nothing after the object is held).
    type as open() takes it, "auto" when omitted (the object's type from its header); dtype
    and the access options as open() takes them, which apply to the name itself."""
    return _tablio.load_object(_specifier(rxfilename, "load_object"), "auto" if type is None else type, dtype, allow_network, allow_pipes,
                               confine, limits)


def save_object(wxfilename, value, type="matrix", dtype=None, compression_method=None, binary=True,
                allow_network=True, allow_pipes=True, confine=None):
    """Writes one object with no key, as Kaldi's WriteKaldiObject writes it (kaldiio's
    save_mat): binary with its header ("\\0B") unless binary=False, to a file, "-" (standard
    output) or "| command". type, dtype and compression_method as writer() takes them."""
    _tablio.save_object(_specifier(wxfilename, "save_object"), value, type, dtype, compression_method, bool(binary),
                        allow_network, allow_pipes, confine)


def shard(rspec, wspec, n, by="count", type=None, allow_network=True, allow_pipes=True, confine=None,
          limits=None):
    """Splits a table into n shards with the same entries in the same order; returns
    [(wspecifier, entries)] for each shard.

    TFRecord, tar, LMDB and IDX shards are named as TensorFlow names them
    ("tfrecord:train.tfrecord" -> train-00000-of-00016.tfrecord, which
    "tfrecord:train-*-of-00016.tfrecord" reads back); Kaldi archives and scripts as split_scp.pl is
    used ("ark,scp:feats.ark,feats.scp" -> feats.1.ark, feats.1.scp, ...). A script (scp:) is
    split by its lines, as split_scp.pl does. by="count" balances entries (the first n % len
    shards take one more), by="bytes" their sizes. type: the values' type; by default, as the
    tool, "matrix" for a Kaldi archive, whose objects need their type, and "bytes" for other
    tables, which copies their records exactly.
    allow_network, allow_pipes, confine and limits as open() takes them.
    """
    return _tablio.shard(_specifier(rspec, "shard"), _specifier(wspec, "shard"), n, by, type or "", shard_index.access(allow_network, allow_pipes, confine, limits))


def value_types():
    """The names type= takes."""
    return _tablio.value_types()


def set_untrusted(confine=None, allow_network=False, limits=None):
    """Treats every name this process opens from now on as untrusted input, in every thread
    and for every entry point, as TABLIO_UNTRUSTED=1 in the environment does: no commands, no
    standard input, regular files only, no cache named by a specifier, tighter limits, and a
    table confined to its own folder unless confine= names a folder for all of them.
    allow_network=True keeps remote objects; limits (a dict, as open() takes it) tightens the
    untrusted limits further. It cannot be undone: a later call may only tighten it (a
    confining folder inside the one set before). See docs/reliability.md."""
    _tablio.set_process_policy(True, bool(allow_network), confine, limits)


def process_policy():
    """The process's policy as a dict: untrusted, allow_network, confine."""
    untrusted, allow_network, confine = _tablio.process_policy()
    return {"untrusted": untrusted, "allow_network": allow_network, "confine": confine}


from . import idx, sample, shard_index, _lookup  # noqa: E402  (need _tablio)

for _mapping_class in (RandomAccessReader, sample.DecodedMapping, _lookup.IndexedTable):
    _as_mapping(_mapping_class)
