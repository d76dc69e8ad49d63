"""tablio tables as Dask collections: datasets read and made on a cluster.

    import tablio.dask
    samples = tablio.dask.read("tar:s3://bucket/raw/train-%06d.tar", type="sample")  # a partition per shard
    examples = samples.map(to_example)                                              # (key, value) pairs
    tablio.dask.write(examples, "tfrecord,key=key:s3://bucket/train/train.tfrecord", type="example")

read() makes a dask.bag.Bag with one partition per shard (or per range of one table's
entries), each opened in the worker that reads it. write() writes each partition of a bag as a
shard of its own, named after the partition's number, and publishes it whole: a task that dies
leaves nothing readable, and one run again (a retry, a duplicate) writes the same shard under
the same name. The client writes the shard index (or, for Kaldi's splits, the concatenated
script) last, once every shard is written: a dataset with an index is whole. See docs/dask.md.
"""

import contextlib
import glob
import os
import re
import secrets
import shutil
import threading
from typing import NamedTuple

import dask
import dask.bag
from dask.highlevelgraph import HighLevelGraph

import tablio
from tablio import _tablio, shard_index
from .errors import excerpt

__all__ = ["read", "write", "Written"]


# ---- where tasks run


class _Folder:
    """The working directory a worker process's tasks run in: the client's, as Kaldi's
    queue.pl runs each job in the folder it was submitted from, so that relative names (in
    specifiers, in a script's lines) mean what they mean in the client. Tasks that need the
    same folder share it; one that needs another waits until they are done."""

    def __init__(self):
        self.changed = threading.Condition()
        self.folder, self.users, self.before = None, 0, None
        self.held = threading.local()

    @contextlib.contextmanager
    def of_client(self, folder):
        if getattr(self.held, "depth", 0) or not os.path.isdir(folder):  # nested, or no such folder here
            yield
            return
        with self.changed:
            self.changed.wait_for(lambda: self.folder in (None, folder))
            if self.folder is None:
                self.before = os.getcwd()
                if self.before != folder:
                    os.chdir(folder)
                self.folder = folder
            self.users += 1
        self.held.depth = 1
        try:
            yield
        finally:
            self.held.depth = 0
            with self.changed:
                self.users -= 1
                if self.users == 0:
                    if self.before != self.folder:
                        os.chdir(self.before)
                    self.folder = None
                    self.changed.notify_all()


_folder = _Folder()


# ---- reading


def _access(options):
    return shard_index.access(options.get("allow_network", True), options.get("allow_pipes", True),
                              options.get("confine"), options.get("limits"))


_ACCESS = ("allow_network", "allow_pipes", "confine", "limits")


def _pieces(rspec, type, npartitions, options):
    """[(rspec, options, k, n)] for the partitions of one table: k of n ranges of its entries
    (n == 1: the whole table, read in order), with the options its tables are opened with."""
    access = {k: options[k] for k in _ACCESS if k in options}
    if (named := shard_index.named_by(rspec)) is not None:
        index = shard_index.load(named, **access)
        index.check_reads(type)
        files, options = index.rspecs(), {**options, **index.options()}
    elif (found := shard_index.find(rspec, **access)) is not None:  # planned with no listing
        found.check_reads(type, rspec.partition(":")[0])
        files, options = found.rspecs(rspec.partition(":")[0]), {**options, **found.options()}
    else:
        files = _tablio.table_files(rspec, _access(options))
    if len(files) > 1:
        if npartitions not in (None, len(files)):
            raise tablio.UsageError(f"'{rspec}' names {len(files)} files, read as a partition each, not "
                                    f"npartitions={npartitions}: repartition the bag (bag.repartition(n))")
        return [(f, options, 0, 1) for f in files]
    n = 1 if npartitions is None else _partition_count(npartitions)
    return [(files[0] if files else rspec, options, k, n) for k in range(n)]


def _partition_count(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise tablio.UsageError(f"npartitions is a number of partitions, 1 or more, not {n!r}")
    return n


def _cut(count, k, n):
    """Where range k of n of `count` entries begins and ends: as split_scp.pl splits, the first
    count % n ranges take one more."""
    def at(j):
        return j * (count // n) + min(j, count % n)
    return at(k), at(k + 1)


# Entries looked up at once in a range of a table: a call without the GIL each.
_LOOKUP_BATCH = 256


def _read_partition(piece, folder, type, keys):
    """The entries of one partition ([its piece]), read in the worker (in the client's folder):
    a whole table in order, or range k of n of its entries, looked up by key."""
    rspec, options, k, n = piece[0]
    with _folder.of_client(folder):
        return _read_entries(rspec, type, options, k, n, keys)


def _read_entries(rspec, type, options, k, n, keys):
    if n == 1:
        with tablio.open(rspec, type=type, **options) as table:
            return list(table) if keys else [value for _, value in table]
    out = []
    with tablio.random_access(rspec, type=type, **options) as table:
        names = table.keys()
        begin, end = _cut(len(names), k, n)
        for at in range(begin, end, _LOOKUP_BATCH):
            chunk = names[at:min(end, at + _LOOKUP_BATCH)]
            values = table.lookup(chunk)
            out += zip(chunk, values) if keys else values
    return out


def read(rspecs, type=None, npartitions=None, keys=True, **options):
    """A dask.bag.Bag of a table's (key, value) pairs (its values with keys=False), a partition
    per shard, each opened and read in the worker that computes it, never in the client.

    rspecs: a specifier or a list of them, each read as tablio.open() reads it: TFRecord and
        tar shards (numbered names, braces, globs, s3://) are a partition each, planned from
        their shard index when there is one beside them ("index:PATH_OR_URL" names one),
        else from the listing of their files; a table of one file (an archive, a script, an
        LMDB database, an IDX file, one TFRecord or tar file) is one partition, or with
        npartitions=N, N ranges of its entries, looked up by key (a script's by its lines, as
        split_scp.pl splits it).
    type and the other options (dtype, features, decode_raw, scale, decode, limits, confine,
    allow_network, allow_pipes, ...) as tablio.open() takes them. Values cross processes
    pickled: view=True's memoryviews cannot; decode= functions must be importable by the
    workers.
    """
    if isinstance(rspecs, str):
        rspecs = [rspecs]
    if not rspecs:
        raise tablio.UsageError("tablio.dask.read() takes a specifier, or a list of one or more")
    bags = []
    for rspec in rspecs:
        rspec = tablio._specifier(rspec, "dask.read")
        value_type = tablio._value_type(rspec, type)
        pieces = _pieces(rspec, value_type, npartitions, options)
        # Partitions as blocks of one graph layer, which what maps them (and writes them) joins:
        # a partition is read, transformed and written in one task, where it is.
        bags.append(dask.bag.from_sequence(pieces, npartitions=len(pieces))
                    .map_partitions(_read_partition, os.getcwd(), value_type, bool(keys)))
    return bags[0] if len(bags) == 1 else dask.bag.concat(bags)


# ---- writing


class Written(NamedTuple):
    wspecs: list  # the wspecifier each partition was written with, in partition order
    shards: list  # [shard_index.Shard] of each partition's file: url (its name), samples, size, keys
    index: str    # the shard index or concatenated script written last, or None


# A name's number: Kaldi's JOB (1, 2, ...), or a printf number (0, 1, ...).
_JOB = "JOB"
_PRINTF = re.compile(r"%0?\d*d")


def _numbered(wspec, i, n):
    """The wspecifier of partition i of n: JOB in its names made i + 1, as Kaldi's run.pl
    makes it, a printf number i, and plain names numbered as tablio.shard() numbers them."""
    options, _, names = wspec.partition(":")
    if _JOB in names:
        return f"{options}:{names.replace(_JOB, str(i + 1))}"
    if _PRINTF.search(names):
        return options + ":" + ",".join(_PRINTF.sub(lambda m: m.group(0) % i, name, count=1)
                                        for name in names.split(","))
    return _tablio.shard_wspecifier(wspec, i, n)


def _files(parts):
    """The files a parsed wspecifier writes: the table's, then the script beside it."""
    return [name for name in (parts["archive"], parts["script"]) if name]


def _checked(wspec):
    """The parsed wspecifier, refused where partitions cannot each write a shard of their own."""
    parts = _tablio.parse_wspecifier(wspec)
    files = _files(parts)
    if parts["format"] == "scp" or not parts["archive"]:
        raise tablio.UsageError(f"'{wspec}' writes to the files a script lists; write a table and its script "
                                "(ark,scp:feats.JOB.ark,feats.JOB.scp)")
    for name in files:
        if name == "-" or "|" in name:
            raise tablio.UsageError(f"'{wspec}': each partition writes files of its own, not a command or "
                                    "standard output")
    if parts["split"]:
        raise tablio.UsageError(f"'{wspec}': a partition is written as one shard; for shards of a size, "
                                "repartition the bag (bag.repartition(n)) instead of maxcount= or maxsize=")
    numbered = [_JOB in name or bool(_PRINTF.search(name)) for name in files]
    if any(numbered) and not all(numbered):
        raise tablio.UsageError(f"'{wspec}': every file needs the partition's number (JOB or %d), or none does "
                                "(then each is numbered as tablio.shard() numbers them)")
    if len({_tablio.is_remote_name(name) for name in files}) > 1:
        raise tablio.UsageError(f"'{wspec}': a table and its script are both local or both remote")
    return parts


def _partial(name, token):
    """Where a file is written before it is published: hidden beside it, so that no pattern
    of the shards matches it."""
    folder, base = os.path.split(name)
    return os.path.join(folder, f".{base}.partial-{token}")


def _clear_partials(name):
    """Removes what attempts that died left of `name`."""
    folder, base = os.path.split(name)
    for left in glob.glob(os.path.join(folder or ".", f".{glob.escape(base)}.partial-*")):
        _remove(left)


def _remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def _publish(partial, name):
    """Renames a written file (or LMDB folder) to its name, in one step: readers see the old
    one or the new one, whole."""
    if os.path.isdir(name) and not os.path.islink(name):  # a folder replaces none in one rename
        old = _partial(name, "old-" + secrets.token_hex(6))
        os.replace(name, old)
        os.replace(partial, name)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(partial, name)


def _record_key(record, name):
    """The key of a (key, value) pair, as a str."""
    if not isinstance(record, (tuple, list)) or len(record) != 2:
        raise tablio.UsageError(f"{shard_index.shown(name)}: a bag written as a table holds (key, value) pairs, "
                                f"not {excerpt(repr(record))}")
    key = record[0]
    if isinstance(key, bytes):
        return key.decode("utf-8", "surrogateescape")
    if not isinstance(key, str):
        raise TypeError(f"{shard_index.shown(name)}: keys are str (or bytes), not {type(key).__name__}")
    return key


def _write_record(table, numbered, key, value, name):
    try:
        if numbered and key.isascii() and key.isdigit():  # record numbers: each shard's own, from 0
            table.append(value)
        else:
            table.write(key, value)
    except Exception as e:
        raise _with_key(e, key, name) from None


def _with_key(error, key, name):
    """The error, saying the key and the shard it was being written to."""
    where = f"writing key '{excerpt(key)}' to {shard_index.shown(name)}"
    if isinstance(error, tablio.FormatError):
        return type(error)(f"{error} ({where})", error.path or name, error.offset, key)
    if type(error) in (TypeError, ValueError, OverflowError, tablio.UsageError, tablio.AccessError):
        return type(error)(f"{error} ({where})")
    if type(error) is OSError or isinstance(error, tablio.StreamError):
        return type(error)(error.errno, f"{error.strerror or error} ({where})", error.filename)
    error.add_note(where)
    return error


class _Counted:
    """A shard's entries as its index counts them."""

    def __init__(self):
        self.samples, self.first, self.last, self.sorted = 0, None, None, True

    def add(self, key):
        if self.samples and self.sorted and not _bytes(self.last) < _bytes(key):
            self.sorted = False
        self.first = key if self.samples == 0 else self.first
        self.last = key
        self.samples += 1


def _bytes(key):
    return key.encode("utf-8", "surrogateescape")


def _write_partition(records, wspec, folder, type, options, access):
    """Writes one partition's (key, value) pairs as the shard `wspec` names, in the worker that
    computes the partition (in the client's folder), and publishes it whole; gives
    [(samples, size, first_key, last_key, sorted)]."""
    with _folder.of_client(folder):
        return [_write_shard(records, wspec, type, options, access)]


def _write_shard(records, wspec, type, options, access):
    parts = _tablio.parse_wspecifier(wspec)
    files = _files(parts)
    remote = _tablio.is_remote_name(files[0])
    if remote:  # an object appears, whole, only when its upload completes
        written, partials = wspec, {}
    else:
        token = secrets.token_hex(8)
        partials = {name: _partial(name, token) for name in files}
        for name in files:
            _clear_partials(name)
        folder = os.path.dirname(files[0])
        if folder:
            os.makedirs(folder, exist_ok=True)
        options_part, _, names = wspec.partition(":")
        written = options_part + ":" + ",".join(partials.get(name, name) for name in names.split(","))
    counted = _Counted()
    table = tablio.writer(written, type=type, **options, **access)
    try:
        for record in records:
            key = _record_key(record, files[0])
            _write_record(table, parts["numbered"], key, record[1], files[0])
            counted.add(key)
        table.close()
    except BaseException:  # what made the records raised, or the writer did: no shard appears
        table.abandon()
        for partial in partials.values():
            _remove(partial)
        raise
    if partials:
        if parts["script"]:  # its lines name the table's file under its final name
            _rename_in_script(partials[parts["script"]], partials[parts["archive"]], parts["archive"])
        for name in files:  # the script last: what it names is in place before it
            _publish(partials[name], name)
    size = _folder_size(files[0]) if os.path.isdir(files[0]) else _tablio.stored_size(files[0], _access(access))
    return counted.samples, size, counted.first, counted.last, counted.sorted


def _folder_size(folder):
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))


def _rename_in_script(script, partial, final):
    """Makes a script written beside `partial` name `final` instead: each line's value is
    `partial:offset` (Kaldi's "KEY FILE:OFFSET")."""
    with open(script, "rb") as f:
        lines = f.read().split(b"\n")
    old, new = os.fsencode(partial) + b":", os.fsencode(final) + b":"
    for j, line in enumerate(lines):
        key, space, value = line.partition(b" ")
        if value.startswith(old):
            lines[j] = key + space + new + value[len(old):]
    with open(script, "wb") as f:
        f.write(b"\n".join(lines))


def _publish_bytes(name, data, access):
    if _tablio.is_remote_name(name):
        _tablio.write_file(name, data, access)
        return
    partial = _partial(name, secrets.token_hex(8))
    with open(partial, "wb") as f:
        f.write(data)
    _publish(partial, name)


def _unnumbered(name):
    """A numbered name as a pattern of all of them: JOB and printf numbers become '*'."""
    return _PRINTF.sub("*", name.replace(_JOB, "*"), count=1)


def _write_index(parts, wspec, wspecs, stats, type, index, access):
    """The shard index of TFRecord and tar shards, from what their tasks counted."""
    name = index if isinstance(index, str) else shard_index.name_for(_unnumbered(parts["archive"]))
    folder = name[:name.rfind("/") + 1]
    stem = name[len(folder):]
    stem = stem[:-len(".shardindex.json")] if stem.endswith(".shardindex.json") else stem.rsplit(".", 1)[0]
    value_type = ""
    if parts["format"] == "tar":
        value_type = parts["extension"] or _tablio.tar_extension(type)
    entries, before = [], 0
    for shard_wspec, (samples, size, first, last, ordered) in zip(wspecs, stats):
        file = _tablio.parse_wspecifier(shard_wspec)["archive"]
        url = file[len(folder):] if folder and file.startswith(folder) else file
        if parts["numbered"] and samples:  # read together, shards number their records on
            first, last, ordered = _ordinal(before), _ordinal(before + samples - 1), True
        entries.append((url, samples, size, first or "", last or "", ordered))
        before += samples
    _publish_bytes(name, _tablio.shard_index_json(stem, parts["format"], value_type, entries).encode(), access)
    return name


def _ordinal(n):
    return f"{n:08d}"


def _write_scripts(parts, wspecs, index, access):
    """Kaldi's splits' scripts, one after the other: the script of the whole table."""
    script = parts["script"]
    name = index if isinstance(index, str) else re.sub(r"[._-]?(JOB|%0?\d*d)", "", script, count=1)
    if name in {_tablio.parse_wspecifier(w)["script"] for w in wspecs}:
        raise tablio.UsageError(f"the script of the whole table, '{name}', would replace a split's; name "
                                "it with index=")
    text = b""
    for shard_wspec in wspecs:
        part = _tablio.parse_wspecifier(shard_wspec)["script"]
        text += _tablio.read_file(part, shard_index.MAX_INDEX_BYTES, access)
    _publish_bytes(name, text, access)
    return name


def write(bag, wspec, type="matrix", dtype=None, compression_method=None, index=True, allow_network=True,
          confine=None, **compute):
    """Writes each partition of a bag of (key, value) pairs as a shard of its own, in the
    worker that computes it, and returns a Written once every shard is written.

    wspec: a wspecifier whose names say how partitions are numbered: Kaldi's JOB (1, 2, ...,
        "ark,scp:data/feats.JOB.ark,data/feats.JOB.scp"), a printf number (0, 1, ...,
        "tar:out/train-%06d.tar"), or none, then as tablio.shard() numbers shards
        ("tfrecord:train.tfrecord" -> train-00003-of-00016.tfrecord, "ark:feats.ark" ->
        feats.4.ark). Local (shared) folders and s3:// alike.
    type, dtype, compression_method: as tablio.writer() takes them.
    index: when every shard is written, the client writes, last, the shard index of TFRecord
        and tar shards (beside them, as tablio.shard_index.name_for() names it) or, for a table
        with a script beside it, the concatenated script (feats.JOB.scp -> feats.scp); a name
        puts it there; False writes none.
    compute: keywords for compute() (scheduler=, retries=, ...).

    A shard is written under a hidden name beside its own (.NAME.partial-*) and renamed when
    complete; an s3:// object appears when its upload completes. A task that dies leaves no
    shard (its next attempt removes what it left), and one that runs again writes the same
    shard under the same name. A record that cannot be written fails the write with its key,
    and no index is written. A table whose reading numbers its records (TFRecord without
    key=, IDX) keeps no keys: records keyed by numbers are numbered from 0 in each shard.
    """
    if not isinstance(bag, dask.bag.Bag):
        raise TypeError("tablio.dask.write() takes a dask.bag.Bag of (key, value) pairs, not "
                        f"{bag.__class__.__name__}")
    wspec = tablio._specifier(wspec, "dask.write")
    parts = _checked(wspec)
    access = {"allow_network": bool(allow_network), "allow_pipes": False, "confine": confine}
    options = {"dtype": dtype, "compression_method": compression_method}
    wspecs = [_numbered(wspec, i, bag.npartitions) for i in range(bag.npartitions)]
    if len(set(wspecs)) != len(wspecs):
        raise tablio.UsageError(f"'{wspec}' gives partitions the same name")
    # A task per partition that depends on that partition alone, so that the scheduler joins
    # it to those that make the partition: a partition is read, transformed and written in one
    # task, where it is. The name is this call's own: writing again is never a result the
    # scheduler still holds.
    name = "tablio-write-" + secrets.token_hex(8)
    tasks = {(name, i): (_write_partition, (bag.name, i), w, os.getcwd(), type, options, access)
             for i, w in enumerate(wspecs)}
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=[bag])
    stats = dask.bag.Bag(graph, name, len(wspecs)).compute(**compute)
    shard_access = _access({**access, "allow_pipes": False})
    shards = [shard_index.Shard(_tablio.parse_wspecifier(w)["archive"], *s) for w, s in zip(wspecs, stats)]
    written_index = None
    if index is not False and parts["format"] in ("tar", "tfrecord") and not parts["script"]:
        written_index = _write_index(parts, wspec, wspecs, stats, type, index, shard_access)
    elif index is not False and parts["script"]:
        written_index = _write_scripts(parts, wspecs, index, shard_access)
    return Written(wspecs, shards, written_index)
