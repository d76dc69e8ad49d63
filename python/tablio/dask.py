"""tablio tables as Dask collections: datasets read and made on a cluster.

    import tablio.dask
    samples = tablio.dask.read("tar:s3://bucket/raw/train-%06d.tar", type="sample")  # a partition per shard
    examples = samples.map(to_example)                                              # (key, value) pairs
    tablio.dask.write(examples, "tfrecord,key=key:s3://bucket/train/train.tfrecord", type="example")

read() makes a dask.bag.Bag with one partition per shard (or per range of one table's
entries), each opened in the worker that reads it. write() writes each partition of a bag as a
shard of its own, named after the partition's number, under a hidden name: a task that dies
leaves nothing readable, and one run again (a retry, a duplicate) writes the same shard under
the same name. Once every partition is written, the client renames the shards into place and
writes the shard index (or, for Kaldi's splits, the concatenated script) last: a dataset with
an index is whole, and a write that fails leaves a folder as it was. See docs/dask.md.
"""

import concurrent.futures
import contextlib
import glob
import os
import re
import secrets
import shutil
import sys
import threading
from typing import NamedTuple

import dask
import dask.bag
import dask.system
import dask.threaded
from dask.highlevelgraph import HighLevelGraph

import tablio
from tablio import _tablio, shard_index
from .errors import excerpt, key_excerpt

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
        """Runs the block in `folder` (None: where it is, for tasks that name nothing relative)."""
        if folder is None or getattr(self.held, "depth", 0):  # nothing relative, or nested
            yield
            return
        if not os.path.isdir(folder):  # relative names would reach other files here: no
            raise tablio.UsageError(
                f"relative names are the client's, in {folder}, a folder this worker does not have: run the "
                "workers where it is shared (at the same path), or give absolute names (or s3://)")
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


def _relative(name):
    """Whether a name is a local path relative to the working directory."""
    return bool(name) and not _tablio.is_remote_name(name) and not os.path.isabs(name) and "|" not in name


def _option_names(rspec):
    """The names a specifier's options give (segments=FILE, cache=DIR)."""
    return [o.partition("=")[2] for o in rspec.partition(":")[0].split(",") if o.startswith(("segments=", "cache="))]


def _client_folder(names, script=False):
    """The client's working directory, for tasks that open relative names (or a script, whose
    lines may be); None for tasks that need none."""
    return os.getcwd() if script or any(_relative(n) for n in names) else None


# ---- reading


def _access(options):
    return shard_index.access(options.get("allow_network", True), options.get("allow_pipes", True),
                              options.get("confine"), options.get("limits"))


_ACCESS = ("allow_network", "allow_pipes", "confine", "limits")


def _pieces(rspec, type, npartitions, index, options):
    """[(rspec, options, k, n, first)] for the partitions of one table: k of n ranges of its
    entries (n == 1: the whole table, read in order), with the options its tables are opened
    with; `first` numbers a file's records on from the files before it, for tables keyed by
    their record numbers (TFRecord without key=), or is None."""
    access = {k: options[k] for k in _ACCESS if k in options}
    fmt = rspec.partition(":")[0]
    planned = None
    if (named := shard_index.named_by(rspec)) is not None:
        planned = shard_index.load(named, **access)
        planned.check_reads(type)
    elif index and (found := shard_index.find(rspec, **access)) is not None \
            and not found.keys_differ(type, fmt):  # planned with no listing
        found.check_reads(type, fmt)
        planned = found
    if planned is not None:
        files, options = planned.rspecs(None if named else fmt), {**options, **planned.options()}
        counts = [shard.samples for shard in planned.shards]
    else:
        # Under the keys its records keep, as tablio.open() reads it (key=key where they keep one).
        rspec = _tablio.reading_rspec(rspec, type, _access(options))
        files, counts = _tablio.table_files(rspec, _access(options)), None
    if len(files) > 1:
        if npartitions not in (None, len(files)):
            raise tablio.UsageError(f"'{rspec}' names {len(files)} files, read as a partition each, not "
                                    f"npartitions={npartitions}: repartition the bag (bag.repartition(n))")
        firsts = [None] * len(files)
        if _tablio.ordinal_keys(files[0]):  # numbered on across the files, as tablio.open() numbers them
            counts = counts or _counts(files, options)
            firsts = [sum(counts[:j]) for j in range(len(files))]
        return [(f, options, 0, 1, first) for f, first in zip(files, firsts)]
    n = 1 if npartitions is None else _partition_count(npartitions)
    return [(files[0] if files else rspec, options, k, n, None) for k in range(n)]


def _count(rspec, options):
    with tablio.open(rspec, type="bytes", **options) as table:
        return table.skip(sys.maxsize)


def _counts(files, options):
    """The records of each file, counted in the workers: what numbers them on across files
    when no shard index says it."""
    access = {k: options[k] for k in _ACCESS if k in options}
    return list(dask.compute(*[dask.delayed(_count, pure=False)(f, access) for f in files]))


def _partition_count(n):
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise tablio.UsageError(f"npartitions is a number of partitions, 1 or more, not {n!r}")
    return n


# Entries looked up at once in a range of a table: a call without the GIL each.
_LOOKUP_BATCH = 256


def _read_partition(piece, folder, type, keys):
    """The entries of one partition ([its piece]), read in the worker (in the client's folder):
    a whole table in order, or range k of n of its entries, looked up by key."""
    rspec, options, k, n, first = piece[0]
    with _folder.of_client(folder):
        return _read_entries(rspec, type, options, k, n, keys, first)


def _read_entries(rspec, type, options, k, n, keys, first=None):
    if n == 1:
        with tablio.open(rspec, type=type, **options) as table:
            if not keys:
                return [value for _, value in table]
            if first is None:
                return list(table)
            return [(_tablio.ordinal_key(first + j), value) for j, (_, value) in enumerate(table)]
    out = []
    with tablio.random_access(rspec, type=type, **options) as table:
        names = table.keys()
        cuts = _tablio.count_cuts(len(names), n)
        begin, end = cuts[k], cuts[k + 1]
        for at in range(begin, end, _LOOKUP_BATCH):
            chunk = names[at:min(end, at + _LOOKUP_BATCH)]
            values = table.lookup(chunk)
            out += zip(chunk, values) if keys else values
    return out


def read(rspecs, type=None, npartitions=None, keys=True, index=True, **options):
    """A dask.bag.Bag of a table's (key, value) pairs (its values with keys=False), a partition
    per shard, each opened and read in the worker that computes it, never in the client.

    rspecs: a specifier or a list of them, each read as tablio.open() reads it: TFRecord and
        tar shards (numbered names, braces, globs, s3://) are a partition each, planned from
        their shard index when there is one beside them ("index:PATH_OR_URL" names one),
        else from the listing of their files; a table of one file (an archive, a script, an
        LMDB database, an IDX file, one TFRecord or tar file) is one partition, or with
        npartitions=N, N ranges of its entries, looked up by key (a script's by its lines, as
        split_scp.pl splits it).
    index: False plans shards from the listing of their files, not from a shard index beside
        them.
    Records that keep no keys (TFRecord without key=) are numbered on across the files, as
        tablio.open() numbers them: from the shard index's counts, else from counts the
        workers make first.
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
        pieces = _pieces(rspec, value_type, npartitions, index, options)
        names = [p[0].partition(":")[2] for p in pieces] + _option_names(rspec)
        folder = _client_folder(names, "scp" in rspec.partition(":")[0].split(","))
        # Partitions as blocks of one graph layer, which what maps them (and writes them) joins:
        # a partition is read, transformed and written in one task, where it is.
        bags.append(dask.bag.from_sequence(pieces, npartitions=len(pieces))
                    .map_partitions(_read_partition, folder, value_type, bool(keys)))
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
    if any(len(_PRINTF.findall(name)) > 1 or (_JOB in name and _PRINTF.search(name)) for name in files):
        raise tablio.UsageError(f"'{wspec}': a name takes the partition's number once (JOB, or one %d)")
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
    """Renames a written file (or LMDB folder) to its name: readers see the old one or the new
    one, whole (a folder that replaces another: for a moment, neither)."""
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


def _write_record(table, numbered, key, value, name, partials):
    try:
        if numbered and key.isascii() and key.isdigit():  # record numbers: each shard's own, from 0
            table.append(value)
        else:
            table.write(key, value)
    except Exception as e:
        raise _with_key(e, key, name, partials) from None


def _with_key(error, key, name, partials):
    """The error, saying the key (None: at close) and the shard it was being written to (by its
    own name, not the hidden one it is written under)."""
    where = (f"writing key '{key_excerpt(key)}' to" if key is not None else "closing") + f" {shard_index.shown(name)}"
    message = str(error)
    for final, partial in partials.items():
        message = message.replace(partial, final)
    if isinstance(error, tablio.FormatError):
        return type(error)(f"{message} ({where})", name, error.offset, key)
    if type(error) in (TypeError, ValueError, OverflowError, tablio.UsageError, tablio.AccessError):
        return type(error)(f"{message} ({where})")
    if type(error) is OSError or isinstance(error, tablio.StreamError):
        return type(error)(error.errno, f"{error.strerror or message} ({where})", name)
    error.add_note(where)
    return error


class _Counted:
    """A shard's entries as its index counts them; keys compared bytewise, as the C++ index
    compares them (each key encoded once)."""

    def __init__(self):
        self.samples, self.first, self.last, self.sorted = 0, None, None, True
        self._last_bytes = None

    def add(self, key):
        encoded = _bytes(key)
        if self.samples and self.sorted and not self._last_bytes < encoded:
            self.sorted = False
        self.first = key if self.samples == 0 else self.first
        self.last, self._last_bytes = key, encoded
        self.samples += 1


def _bytes(key):
    return key.encode("utf-8", "surrogateescape")


def _write_partition(records, wspec, folder, type, options, access):
    """Writes one partition's (key, value) pairs as the shard `wspec` names, in the worker that
    computes the partition (in the client's folder); gives [(samples, size, first_key,
    last_key, sorted, {name: where it was written, to publish})]."""
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
            _write_record(table, parts["numbered"], key, record[1], files[0], partials)
            counted.add(key)
        try:
            table.close()
        except Exception as e:
            raise _with_key(e, None, files[0], partials) from None
    except BaseException as e:  # what made the records raised, or the writer did: no shard appears
        table.abandon()
        for partial in partials.values():
            _remove(partial)
        said = shard_index.shown(files[0]) in str(e) or getattr(e, "__notes__", None)
        if isinstance(e, Exception) and not said:
            e.add_note(f"while making the records of {shard_index.shown(files[0])}"
                       + (f", after key '{key_excerpt(counted.last)}'" if counted.samples else ""))
        raise
    if parts["script"] and partials:  # its lines name the table's file under its final name
        _rename_in_script(partials[parts["script"]], partials[parts["archive"]], parts["archive"])
    written = partials.get(files[0], files[0])
    size = _folder_size(written) if os.path.isdir(written) else _tablio.stored_size(written, _access(access))
    return counted.samples, size, counted.first, counted.last, counted.sorted, partials


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
    if os.path.dirname(name):
        os.makedirs(os.path.dirname(name), exist_ok=True)
    partial = _partial(name, secrets.token_hex(8))
    with open(partial, "wb") as f:
        f.write(data)
    _publish(partial, name)


def _shard_glob(wspec, name, i):
    """A glob of every shard name `name` (the i-th file of wspec's names) gives, whatever the
    number of partitions: JOB and printf numbers, or the number tablio.shard() adds, as '*'."""
    if _JOB in name or _PRINTF.search(name):
        return _PRINTF.sub("*", name.replace(_JOB, "*"), count=1)
    plain = glob.escape(name)
    first = glob.escape(_tablio.shard_wspecifier(wspec, 0, 2).partition(":")[2].split(",")[i])
    at = len(os.path.commonprefix([plain, first]))
    return plain[:at] + re.sub(r"\d+", "*", first[at:at + len(first) - len(plain)]) + plain[at:]


def _index_name(parts, wspec, index):
    """What the client writes last: the shard index of TFRecord and tar shards, the script of
    the whole table beside Kaldi's splits, or nothing (None)."""
    if index is False or not (parts["script"] or parts["format"] in ("tar", "tfrecord")):
        return None
    if isinstance(index, str):
        return index
    if parts["script"]:  # feats.JOB.scp, feats.%d.scp, feats.scp -> feats.scp
        return re.sub(r"[._-]?(JOB|%0?\d*d)", "", parts["script"], count=1)
    return shard_index.name_for(_shard_glob(wspec, parts["archive"], 0))


def _check_target(parts, wspec, wspecs, index_name, access):
    """Refuses a write that would leave shards of an earlier writing beside its own (with more
    partitions, other names of the same pattern, or another naming under the same index), or
    an index in a bucket that could outlive a failed rewrite."""
    ours = set()
    for w in wspecs:
        ours.update(_files(_tablio.parse_wspecifier(w)))
    if index_name in ours:
        raise tablio.UsageError(f"'{index_name}', written last, would replace a shard's file; name it with index=")
    names = _files(parts)
    for i, name in enumerate(names):
        pattern = _shard_glob(wspec, name, i)
        if _tablio.is_remote_name(name):
            if parts["format"] not in ("tar", "tfrecord"):
                continue  # other formats' objects are not listed: a new dataset goes under a new prefix
            try:
                found = [f.partition(":")[2] for f in _tablio.table_files(f"{parts['format']}:{pattern}", access)]
            except (tablio.UsageError, OSError):  # none yet
                found = []
        else:
            found = glob.glob(pattern)
        others = sorted(set(found) - ours)
        if others:
            shown = ", ".join(shard_index.shown(o) for o in others[:3]) + (", ..." if len(others) > 3 else "")
            raise tablio.UsageError(f"{shown}: shards of an earlier writing, which this one ({len(wspecs)} "
                                    f"partitions) would leave beside its own; remove them, or write elsewhere")
    if index_name is None:
        return
    if not _tablio.is_remote_name(index_name):
        _check_earlier_index(index_name, ours, len(wspecs))
        return
    try:
        _tablio.stored_size(index_name, access)
    except (OSError, tablio.UsageError):
        return
    raise tablio.UsageError(f"{shard_index.shown(index_name)} exists: a dataset in a bucket is written once, "
                            "under a new prefix (its index could outlive a rewrite that fails)")


def _check_earlier_index(index_name, ours, partitions):
    """Refuses to replace an index whose shards this writing would leave beside its own (shards
    of another naming, in the same folder)."""
    try:
        earlier = shard_index.load(index_name)
    except (OSError, ValueError):  # none, or no index: nothing it lists is left
        return
    others = sorted(s.url for s in earlier.shards if os.path.exists(s.url) and s.url not in ours)
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise tablio.UsageError(f"{index_name} lists {shown}, shards of an earlier writing, which this one "
                                f"({partitions} partitions) would leave beside its own; remove them (and the "
                                "index), or write elsewhere")


def _write_index(name, parts, wspecs, stats, type, access):
    """The shard index of TFRecord and tar shards, from what their tasks counted."""
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
            first, last, ordered = _tablio.ordinal_key(before), _tablio.ordinal_key(before + samples - 1), True
        entries.append((url, samples, size, first or "", last or "", ordered))
        before += samples
    json = _tablio.shard_index_json(stem, parts["format"], value_type, parts["key"], entries)
    _publish_bytes(name, json.encode(), access)


def _write_script(name, wspecs, access):
    """Kaldi's splits' scripts, one after the other: the script of the whole table."""
    text = b""
    for shard_wspec in wspecs:
        part = _tablio.parse_wspecifier(shard_wspec)["script"]
        text += _tablio.read_file(part, shard_index.MAX_INDEX_BYTES, access)
    _publish_bytes(name, text, access)


def _compute_to_the_end(bag, compute):
    """Computes `bag` as bag.compute(**compute) does, but when a task fails returns (raising its
    error) only once no other task of it still runs: Dask's threads and a distributed cluster
    go on with the tasks they had started, which would write their shards after the failed
    writing was cleared away. (The processes scheduler waits for its own pool.)"""
    options = dict(compute)
    scheduler = dask.base.get_scheduler(scheduler=options.pop("scheduler", None), collections=[bag])
    distributed = sys.modules.get("distributed")  # a client's scheduler means it was imported
    client = getattr(scheduler, "__self__", None)
    if distributed is not None and isinstance(client, distributed.Client):
        futures = client.compute(bag.to_delayed(), **options)
        distributed.wait(futures)
        return [record for part in client.gather(futures) for record in part]
    if scheduler is dask.threaded.get and options.get("pool") is None and dask.config.get("pool", None) is None:
        workers = options.pop("num_workers", None) or dask.config.get("num_workers", None)
        pool = concurrent.futures.ThreadPoolExecutor(workers or dask.system.CPU_COUNT)
        try:
            return bag.compute(scheduler=scheduler, pool=pool, **options)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
    return bag.compute(scheduler=scheduler, **options)


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

    A shard is written under a hidden name beside its own (.NAME.partial-*), and once every
    partition is written the client renames them into place, then writes the index: a write
    that fails leaves a folder as it was (an s3:// object appears when its upload completes,
    and a bucket's dataset is written once). A task that dies leaves no shard (its next attempt
    removes what it left), and one that runs again writes the same shard under the same name.
    A record that cannot be written fails the write with its key. A table whose reading numbers
    its records (TFRecord without key=, IDX) keeps no keys: records keyed by numbers are
    numbered from 0 in each shard.
    """
    if not isinstance(bag, dask.bag.Bag):
        raise TypeError("tablio.dask.write() takes a dask.bag.Bag of (key, value) pairs, not "
                        f"{bag.__class__.__name__}")
    # Keys in a "key" feature where TFRecord holds the values as Examples of their form, as
    # every writer keeps them: the index then bounds each shard by its keys.
    wspec = _tablio.writing_wspec(tablio._specifier(wspec, "dask.write"), type)
    parts = _checked(wspec)
    access = {"allow_network": bool(allow_network), "allow_pipes": False, "confine": confine}
    options = {"dtype": dtype, "compression_method": compression_method}
    wspecs = [_numbered(wspec, i, bag.npartitions) for i in range(bag.npartitions)]
    if len(set(wspecs)) != len(wspecs):
        raise tablio.UsageError(f"'{wspec}' gives partitions the same name")
    shard_access = _access(access)
    index_name = _index_name(parts, wspec, index)
    _check_target(parts, wspec, wspecs, index_name, shard_access)
    # A task per partition that depends on that partition alone, so that the scheduler joins
    # it to those that make the partition: a partition is read, transformed and written in one
    # task, where it is. The name is this call's own: writing again is never a result the
    # scheduler still holds.
    name = "tablio-write-" + secrets.token_hex(8)
    folder = _client_folder(_files(parts))
    tasks = {(name, i): (_write_partition, (bag.name, i), w, folder, type, options, access)
             for i, w in enumerate(wspecs)}
    graph = HighLevelGraph.from_collections(name, tasks, dependencies=[bag])
    try:
        stats = _compute_to_the_end(dask.bag.Bag(graph, name, len(wspecs)), compute)
    except BaseException:  # nothing of this writing appears; what earlier attempts left goes
        for w in wspecs:
            for file in _files(_tablio.parse_wspecifier(w)):
                if not _tablio.is_remote_name(file):
                    _clear_partials(file)
        raise
    # Every shard is written: published now, the earlier index first out of the way, and the
    # index last. A writing that fails before this point leaves the folder as it was.
    if index_name is not None and not _tablio.is_remote_name(index_name):
        _remove(index_name)
    for partition in stats:
        for final, partial in partition[5].items():  # the table's file, then its script
            _publish(partial, final)
    stats = [partition[:5] for partition in stats]
    shards = [shard_index.Shard(_tablio.parse_wspecifier(w)["archive"], *s) for w, s in zip(wspecs, stats)]
    if index_name is not None and parts["script"]:
        _write_script(index_name, wspecs, shard_access)
    elif index_name is not None:
        _write_index(index_name, parts, wspecs, stats, type, shard_access)
    return Written(wspecs, shards, index_name)
