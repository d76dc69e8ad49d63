"""PyTorch datasets over tablio tables (imported only when used: needs torch).

TableDataset is map-style, over any table with random access. TableIterableDataset streams
a list of tables or shards and splits them over DataLoader workers and torch.distributed
ranks together, so that each record is delivered exactly once per epoch across the job, with
every rank taking the same number of samples or batches (see uneven=).

Which records each rank and worker reads, and in which order, is the epoch's plan
(tablio._plan), a pure function of the tables' record counts, the seed, the epoch, the rank
and world size, and the worker. The process that owns the DataLoader says where it runs and
which epoch it is; its workers, started by fork, spawn or forkserver, persistent or not, read
that from memory they share with it, and never ask torch.distributed themselves.

Handles are opened lazily in the process that reads (a DataLoader worker, after fork or
spawn): no LMDB environment, mapping or pipe is shared across a fork.
"""

import atexit
import collections.abc
import multiprocessing
import operator
import os
import sys
import threading
import warnings
import weakref

import numpy as np
import torch
import torch.utils.data

import tablio
from tablio import _execute, _lookup, _plan, _resume, _tablio, shard_index

__all__ = ["TableDataset", "TableIterableDataset", "DataLoader", "DistributedSampler", "to_tensors", "collate",
           "expand_shards"]

# numpy types that torch has no dtype for, and the wider ones they become.
_WIDER = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64}


def to_tensors(value):
    """numpy arrays in a value (alone, in tuples, lists or dicts) as tensors, without copying
    writable arrays of a type torch has (torch.from_numpy); read-only arrays (IDX views) are
    copied, and unsigned 16- and 32-bit numbers widened to int32 and int64."""
    return _converted(value, _tensor)


def _tensor(array):
    if not array.flags.writeable or not array.dtype.isnative or array.dtype in _WIDER:
        array = np.array(array, dtype=_torch_dtype(array.dtype.newbyteorder("=")))
    return _from_numpy(array)


def _torch_dtype(dtype):
    return _WIDER.get(dtype, dtype)


# The types torch.from_numpy takes and computes with; others are widened (asked first rather
# than caught: torch's refusal is a C++ exception, costly and, in a process that mixes C++
# runtimes, fatal).
_TORCH_TAKES = {np.dtype(t) for t in (np.float64, np.float32, np.float16, np.complex64, np.complex128,
                                      np.int64, np.int32, np.int16, np.int8, np.uint8, np.bool_)}


def _from_numpy(array):
    if array.dtype in _TORCH_TAKES:
        return torch.from_numpy(array)
    if array.dtype == np.uint64:  # wider than any type torch has: int64 when it fits
        if array.size and array.max() > np.iinfo(np.int64).max:
            raise tablio.UsageError("uint64 values above 2**63-1 have no torch dtype")
        return torch.from_numpy(array.astype(np.int64))
    return torch.from_numpy(array.astype(_torch_dtype(array.dtype.newbyteorder("="))))


def _converted(value, tensor):
    """The value with tensor(array) for each numpy array in it."""
    if isinstance(value, np.ndarray):
        return tensor(value)
    if isinstance(value, tuple):
        return tuple([tensor(v) if type(v) is np.ndarray else _converted(v, tensor) for v in value])
    if isinstance(value, dict):
        return {k: tensor(v) if type(v) is np.ndarray else _converted(v, tensor) for k, v in value.items()}
    if isinstance(value, list):
        return [_converted(v, tensor) for v in value]
    return value


def _tensors_for(options):
    """The conversion a dataset's values take: to_tensors where decode= functions (the user's)
    may return arrays that are read-only or not native, else the reader's own."""
    return to_tensors if options.get("decode") not in (None, False) else _read_to_tensors


def _read_to_tensors(value):
    """to_tensors for what a table reader returned."""
    # A reader's values (as the datasets read them: never view=True) hold arrays of their own,
    # writable and in native byte order, so they become tensors with no check (checking each
    # array's flags cost as much as the conversion itself); the rare type torch lacks fails
    # the conversion and is widened then.
    return _converted(value, _from_numpy)


def collate(samples):
    """DataLoader's collate_fn for tablio's values, batching them as the C++ reader's batches
    do: tensors of one shape and dtype stacked, others kept as a list; an Example's features
    and a sample's members one by one, each with one structure whatever samples lack it
    (zeros in a stacked tensor, None in a list, and `batch["__missing__"][name]` a bool tensor
    of the samples that lack it); a member's own dicts (JSON) stay a list of dicts;
    bytes features of one count and length as a uint8 tensor (N, count, length); Python ints
    and floats as int64 and float64 tensors; tuples (a Datum's image and label) field by
    field. Samples of with_keys=True give (keys, batch)."""
    if not isinstance(samples, collections.abc.Sequence) or isinstance(samples, (str, bytes)):
        raise tablio.UsageError(f"collate takes a batch's samples (a sequence of them), not a {type(samples).__name__}: "
                                "give it as collate_fn with a batch_size (with batch_size=None, leave collate_fn out)")
    if samples and isinstance(samples[0], tuple) and len(samples[0]) == 2 and isinstance(samples[0][0], str):
        return [key for key, _ in samples], _collated([value for _, value in samples])
    return _collated(list(samples))


MISSING = "__missing__"


def _collated(values, top=True):
    """One field's values across a batch's samples, batched. Only the samples themselves
    (dicts of members or features) become columns; a member's own dicts (JSON) stay a list."""
    if not values or any(v is None for v in values):
        return values
    first = values[0]
    if isinstance(first, torch.Tensor):
        if all(isinstance(v, torch.Tensor) and v.shape == first.shape and v.dtype == first.dtype for v in values):
            return torch.stack(values)
    elif isinstance(first, dict):
        if top and all(isinstance(v, dict) for v in values):
            names = dict.fromkeys(name for v in values for name in v)
            return _with_missing({name: [v.get(name) for v in values] for name in names}, len(values))
    elif isinstance(first, tuple):
        if all(isinstance(v, tuple) and len(v) == len(first) for v in values):
            return tuple(_collated(list(field), top) for field in zip(*values))
    elif isinstance(first, bool):
        if all(isinstance(v, bool) for v in values):
            return torch.tensor(values)
    elif isinstance(first, (int, float)):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            return torch.tensor(values, dtype=torch.int64 if all(isinstance(v, int) for v in values) else torch.float64)
    elif isinstance(first, list) and first and isinstance(first[0], bytes):
        lengths = {len(b) for v in values if isinstance(v, list) for b in v if isinstance(b, bytes)}
        if len(lengths) == 1 and all(isinstance(v, list) and len(v) == len(first) and
                                     all(isinstance(b, bytes) for b in v) for v in values):
            joined = b"".join(b for v in values for b in v)
            return torch.frombuffer(bytearray(joined), dtype=torch.uint8).reshape(len(values), len(first), *lengths)
    return values


def _sample_batch(samples, tensors):
    """A batch of samples ({extension: value} each) as _collated([tensors(v) for v in samples])
    batches it, where a member's arrays are consecutive rows of arrays (a reader's batch gives
    its images of one shape so): rows of one array taken as they are, rows of a few (a batch
    that spans two reads) joined in one copy, rather than stacking a copy of each."""
    in_rows = {}
    if len(samples) > 1 and all(isinstance(v, dict) for v in samples):
        for name in samples[0]:
            runs = _runs_of_rows([v.get(name) for v in samples])
            if runs is not None:
                in_rows[name] = runs[0] if len(runs) == 1 else np.concatenate(runs)
    if not in_rows:
        return _collated([tensors(v) for v in samples])
    rest = _collated([tensors({name: value for name, value in v.items() if name not in in_rows}) for v in samples])
    names = dict.fromkeys(name for v in samples for name in v)
    batch = {name: tensors(in_rows[name]) if name in in_rows else rest[name] for name in names}
    batch[MISSING] = rest[MISSING]
    return batch


def _runs_of_rows(values, most=4):
    """The arrays (at most `most`) whose consecutive rows `values` are, in order: views of rows
    of base arrays of one row shape and type; or None."""
    runs, run = [], None  # run: [base, first row, rows, address of the next row]
    for v in values:
        base = v.base if type(v) is np.ndarray else None
        if type(base) is not np.ndarray or base.dtype != v.dtype or base.shape[1:] != v.shape \
                or not base.flags.c_contiguous or not v.flags.c_contiguous or v.nbytes == 0:
            return None
        at = v.__array_interface__["data"][0]
        if run is not None and run[0] is base and at == run[3]:
            run[2] += 1
            run[3] += v.nbytes
            continue
        row, extra = divmod(at - base.__array_interface__["data"][0], v.nbytes)
        if extra or (runs and (base.shape[1:] != runs[0][0].shape[1:] or base.dtype != runs[0][0].dtype)) \
                or len(runs) == most:
            return None
        run = [base, row, 1, at + v.nbytes]
        runs.append(run)
    return [base[row:row + n] for base, row, n, _ in runs]


def _with_missing(columns, count):
    """A batch of dicts from its columns (name: the samples' values, None where a sample lacks
    it), each batched with one structure whatever is missing: where the present values stack
    into a tensor, the lacking samples' rows are zeros; otherwise a list, with None for them.
    batch["__missing__"] maps each name some samples lack to a bool tensor, True for those."""
    batch, missing = {}, {}
    for name, column in columns.items():
        absent = [v is None for v in column]
        if not any(absent):
            batch[name] = column if isinstance(column, torch.Tensor) else _collated(column, top=False)
            continue
        missing[name] = torch.tensor(absent)
        present = _collated([v for v in column if v is not None], top=False)
        if isinstance(present, torch.Tensor):
            full = present.new_zeros((count, *present.shape[1:]))
            full[~missing[name]] = present
            batch[name] = full
        else:
            batch[name] = column
    batch[MISSING] = missing
    return batch


# Numbers shared with DataLoader workers are made by the spawn context: those of the default
# (fork) context crash a worker started by spawn, while these serve fork and forkserver too.
_shared = multiprocessing.get_context("spawn")


class _Skips:
    """on_error="skip": records that fail to decode are left out, each with a warning that
    names its table and key, and counted in numbers shared with the DataLoader's workers
    (fork, spawn or forkserver). For tablio.torch.DataLoader's state, each worker also notes,
    for its last items, how many it had left out when it yielded each (a ring the loader
    provides, longer than a worker can run ahead): the loader then counts exactly the records
    left out before the items it has yielded."""

    def __init__(self, on_error):
        if on_error not in ("raise", "skip"):
            raise tablio.UsageError(f"on_error is 'raise' or 'skip', not {on_error!r}")
        self.count = _shared.Value("q", 0) if on_error == "skip" else None
        self.board = None  # (items per worker, ring of counts per worker, ring length)
        self._worker, self._left_out = 0, 0  # in the process that reads

    def __bool__(self):
        return self.count is not None

    def __call__(self, error, records=1):
        with self.count.get_lock():
            self.count.value += records
        warnings.warn(f"left out {records} record{'s' if records > 1 else ''} that failed: {error}", RuntimeWarning,
                      stacklevel=2)

    @property
    def total(self):
        return None if self.count is None else self.count.value

    def provide_board(self, workers, ring):
        """Shared numbers for `workers` workers, before an iteration starts them (kept for
        persistent ones): until a worker says how many items it yields, as many as can be."""
        if self.board is None or len(self.board[0]) != workers:
            self.board = (_shared.Array("q", workers, lock=False), _shared.Array("q", workers * ring, lock=False), ring)
        for w in range(workers):
            self.board[0][w] = 2**62

    def start(self, worker, items):
        """A worker begins an iteration that yields `items` items."""
        self._worker, self._left_out = worker, 0
        if self.board is not None:
            self.board[0][worker] = items

    def attribute(self, records):
        """The item the worker yields next stands for `records` records left out."""
        self._left_out += records

    def yielded(self, item):
        """The worker yields its item-th item (from 0) of the iteration."""
        if self.board is not None:
            totals, ring, length = self.board
            ring[self._worker * length + item % length] = self._left_out

    def before(self, yielded):
        """The records left out before the first `yielded` items of the loader's iteration."""
        if self.board is None or not yielded:
            return 0
        totals, ring, length = self.board
        taken, _ = _plan.round_robin(list(totals), yielded)
        return sum(ring[w * length + (n - 1) % length] for w, n in enumerate(taken) if n)

    def __getstate__(self):
        # The shared numbers go to the DataLoader's workers as they start; pickled for anything
        # else (a saved dataset), the count starts again.
        if self.count is not None and multiprocessing.context.get_spawning_popen() is None:
            return {"count": None, "board": None, "fresh": True}
        return {"count": self.count, "board": self.board, "fresh": False}

    def __setstate__(self, state):
        self.count = _shared.Value("q", 0) if state["fresh"] else state["count"]
        self.board, self._worker, self._left_out = state["board"], 0, 0


def _cut_by_segments(rspec, segments):
    """Whether a table's values are cut by a segments file (segments=, or the specifier's)."""
    return segments is not None or any(o.startswith("segments=") for o in rspec.partition(":")[0].split(","))


def _dataset_type(rspec, type, segments):
    """A dataset's value type: "matrix" unless given, "wave" for a table cut by segments."""
    if type is not None:
        return type
    return "wave" if _cut_by_segments(rspec, segments) else "matrix"


def expand_shards(rspec, allow_network=True, allow_pipes=True, confine=None, limits=None):
    """One specifier per shard. The files of a TFRecord or tar table ("a,b", globs such as
    "train-*-of-00016", TensorFlow's "name@16", "shard-%06d.tar") are expanded as the C++
    tables expand them; any other table (an scp, an LMDB, an archive) is one shard. Access
    options as tablio.open() takes them."""
    return _tablio.table_files(rspec, shard_index.access(allow_network, allow_pipes, confine, limits))


def _access_options(allow_network, allow_pipes, confine, limits):
    return {"allow_network": allow_network, "allow_pipes": allow_pipes, "confine": confine, "limits": limits}


def _where(rank=None, world_size=None):
    """(rank, world size) of this process: those given, else torch.distributed's when it is
    initialized, else the launcher's RANK and WORLD_SIZE, else (0, 1)."""
    if (rank is None) != (world_size is None):
        raise tablio.UsageError("give both rank= and world_size=, or neither")
    if rank is None:
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            rank, world_size = torch.distributed.get_rank(), torch.distributed.get_world_size()
        elif "RANK" in os.environ and "WORLD_SIZE" in os.environ:
            rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        else:
            rank, world_size = 0, 1
    if not 0 <= rank < world_size:
        raise tablio.UsageError(f"rank {rank} is not one of world size {world_size}'s ranks")
    return rank, world_size


class _JobState:
    """The epoch and where the job runs (rank, world size), as the process that owns the
    DataLoader sets them, in memory that its workers share (after fork, spawn or forkserver):
    persistent workers, which keep their copy of the dataset, see every set_epoch. A dataset
    that reaches another process that is not one of its workers (pickled to a rank started by
    torch.multiprocessing.spawn) gets a state of its own there."""

    def __init__(self):
        self._shared = torch.zeros(4, dtype=torch.int64).share_memory_()
        self.owner = os.getpid()

    def set(self, epoch, rank, world):
        self._shared[0], self._shared[1], self._shared[2] = epoch, rank, world

    def get(self):
        epoch, rank, world, _ = self._shared.tolist()
        return epoch, rank, world

    def iteration(self):
        """How many iterations the owner's loaders have started: a resume applies to one."""
        return int(self._shared[3])

    def next_iteration(self):
        self._shared[3] += 1
        return int(self._shared[3])


# Before a fork (DataLoader workers by fork), the datasets of the forking process note where
# it runs, as they do when pickled for spawned workers: what their workers read is then what
# the owner knows at that moment.
_datasets = weakref.WeakSet()


def _before_fork():
    for dataset in list(_datasets):
        dataset._note_where()


os.register_at_fork(before=_before_fork)


# A DataLoader worker stopped early (its loader dropped mid-epoch) ends without waiting for its
# result queue's feeder thread (torch's cancel_join_thread), which may then be putting a batch's
# tensors into shared memory, in PyTorch's C++ code; the exiting interpreter ends that thread
# from there, and the worker dies by SIGABRT ("terminate called without an active exception"),
# reported by the loader as a worker killed by a signal. Torch's own datasets do the same; a
# worker that reads tablio tables waits at exit, two seconds at most, for its feeders to finish.
_feeders_finished_at_exit = False


def _finish_queue_feeders():
    for thread in threading.enumerate():
        if thread.name == "QueueFeederThread" and thread.is_alive():
            thread.join(2.0)


def _in_worker():
    global _feeders_finished_at_exit
    if not _feeders_finished_at_exit:
        _feeders_finished_at_exit = True
        atexit.register(_finish_queue_feeders)


class _CarriedError:
    """An error met in a DataLoader worker, carried to tablio.torch.DataLoader's process as an
    item, whole: torch's DataLoader makes a worker's error again from its message alone, which
    quotes 16 bytes of a key, so that FormatError's path, offset and key would be lost."""

    def __init__(self, error):
        self.error = error


def _carries_errors(dataset):
    """How many times a dataset in a worker of tablio.torch.DataLoader gives an error as an
    item (as many as a batch takes, so that a batch holds it whatever drop_last says); 0 where
    errors are raised as they are (no such loader, or no worker)."""
    per_fetch = getattr(dataset, "_carried_errors", 0)
    return per_fetch if per_fetch and torch.utils.data.get_worker_info() is not None else 0


def _carrying(items, per_fetch):
    """items, or, after a FormatError, that error as per_fetch items."""
    try:
        yield from items
    except tablio.FormatError as error:
        for _ in range(per_fetch):
            yield _CarriedError(error)


class _CollateCarried:
    """A DataLoader's collate_fn, for batches that may hold a carried error: the error is the
    batch."""

    def __init__(self, collate_fn):
        self.collate_fn = collate_fn

    def __call__(self, batch):
        if isinstance(batch, _CarriedError):
            return batch
        if isinstance(batch, list):
            for item in batch:
                if isinstance(item, _CarriedError):
                    return item
        return self.collate_fn(batch)


def _take_policy(policy):
    """A worker started by spawn or forkserver (a process of its own, which set_untrusted() did
    not reach) takes the policy of the process that made the dataset, before it opens anything."""
    if policy and (policy["untrusted"] or policy["confine"] or not policy["allow_network"]):
        _tablio.set_process_policy(policy["untrusted"], policy["allow_network"], policy["confine"], None)


class TableDataset(torch.utils.data.Dataset):
    """Map-style: ds[i] is the value of the i-th key in table order; len(ds) and ds.keys.

    Any table with random access: scp, ark (indexed when opened), TFRecord, LMDB, IDX, tar.
    Works with any sampler, DistributedSampler included. dtype, scale, decode_raw, features and
    decode (samples), images (decoded JPEG and PNG images: samples' members, encoded Datums,
    Examples' image/encoded), and the access options
    allow_network, allow_pipes, confine and limits, as tablio.open()
    takes them (scale=1/255 gives a Datum's images as float tensors, converted
    in C++; features=["image_raw", "label"] reads only those of an Example). transform is
    applied to the value (after numpy arrays become tensors). ds[[i, j, ...]] (a BatchSampler
    under DataLoader(batch_size=None)) gives the batch of those samples, collated. A table with
    a repeated key is refused here, so that no index ever gives another entry's value.

    rspec "index:PATH_OR_URL" reads the shards a shard index lists (tablio.shard_index), in
    its order, with no pass over them at construction: len(ds) is the index's, and ds[i] (and
    ds.keys[i]) opens only the shard that holds record i, whose keys are then listed once. A
    shard whose size or number of records differs from its index's is an error.

    on_error="skip" leaves out a record that fails to decode (a FormatError: a damaged
    record, or a decode= function that raised), with a RuntimeWarning naming its table and
    key, counted in ds.skipped: ds[i] gives the next record that decodes in its place (as a
    padded rank repeats records), and a batch ds[[i, j, ...]] is short of it. "raise" (the
    default) raises the error.
    """

    def __init__(self, rspec, type=None, transform=None, dtype=None, scale=None, decode_raw=None,
                 features=None, decode=None, allow_network=True, allow_pipes=True, confine=None, limits=None,
                 on_error="raise", segments=None, images=None):
        self.rspec, self.type, self.transform = rspec, _dataset_type(rspec, type, segments), transform
        self._skips = _Skips(on_error)
        self.options = {"dtype": dtype, "scale": scale, "decode_raw": decode_raw, "features": features,
                        "decode": decode, "images": images}
        if segments is not None:
            self.options["segments"] = segments
        self.access = _access_options(allow_network, allow_pipes, confine, limits)
        self._table = None
        self._pid = None
        self._job, self._opened_epoch = _JobState(), 0  # the epoch, which persistent workers see set
        if (named := shard_index.named_by(rspec)) is not None:
            self.index = shard_index.load(named, **self.access)
            self.index.check_reads(type)
            self.keys = _IndexedKeys(self)
        else:
            self.index = None
            with self._reopen() as table:
                self.keys = table.keys()
                if _cut_by_segments(rspec, segments):  # the segments extract-segments keeps
                    self.keys = [key for key in self.keys if key in table]

    def set_epoch(self, epoch):
        """Sets the epoch whose draws images='s transforms make (a random crop, a flip): each
        epoch its own, the same in every worker (persistent ones too) and in a resumed epoch.
        Call it each epoch, with the sampler's set_epoch."""
        if torch.utils.data.get_worker_info() is None and os.getpid() != self._job.owner:
            self._job = _JobState()  # a process of its own (a rank), not one of the owner's workers
        self._job.set(epoch, 0, 1)

    @property
    def epoch(self):
        """The epoch set last (0 before any), in the owner and its workers alike."""
        return self._job.get()[0]

    def _epoch_images(self, epoch):
        """images= as the records are read with in `epoch`: its transform's seed drawn from the epoch."""
        if not epoch or self.options["images"] is None:
            return self.options["images"]
        return tablio._transforms.with_seed(self.options["images"], int(_plan._rng(epoch, "images").integers(2**63)))

    def transform_draw(self, key, width, height, epoch=None):
        """What images='s transform draws in `epoch` (the one set last) for the record of `key`
        whose decoded image is width x height: as tablio.transform_draw gives it,
        {"box": (left, top, width, height), "flip": bool}."""
        return tablio.transform_draw(self._epoch_images(self.epoch if epoch is None else epoch), width, height, key,
                                     type=self.type)

    def _reopen(self, epoch=0):
        options = dict(self.options, images=self._epoch_images(epoch))
        if self.index is not None:
            return _lookup.IndexedTable(self.index, lambda spec: tablio.random_access(
                spec, self.type, **options, **self.index.options()))
        return tablio.random_access(self.rspec, type=self.type, **options, **self.access)

    def __len__(self):
        return len(self.keys)

    def _opened(self):
        # never a handle from before a fork; the draws of the epoch set
        epoch = self.epoch
        if self._pid != os.getpid() or self._opened_epoch != epoch:
            if torch.utils.data.get_worker_info() is not None:
                _in_worker()
            if self._table is not None and self._pid == os.getpid():
                self._table.close()
            self._table, self._pid, self._opened_epoch = self._reopen(epoch), os.getpid(), epoch
        return self._table

    def __getitem__(self, index):
        try:
            return self._item(index)
        except tablio.FormatError as error:
            if _carries_errors(self):
                return _CarriedError(error)
            raise

    def _item(self, index):
        try:
            index = operator.index(index)  # an int, a numpy integer, a 0-d tensor
        except TypeError:
            return collate(self._items(index))
        position = self._position(index)
        if not 0 <= position < len(self):
            raise IndexError(f"index {index} of a dataset of {len(self)}")
        for tried in range(len(self)):  # on_error="skip": the next record that decodes stands in
            try:
                value = self._value((position + tried) % len(self))
                break
            except tablio.FormatError as e:
                if not self._skips:
                    raise
                self._left_out(e)
        else:
            raise tablio.FormatError(f"no record of {self.rspec} decodes")
        value = _tensors_for(self.options)(value)
        return self.transform(value) if self.transform else value

    def _value(self, position):
        if self.index is not None:
            return self._opened().at(position)[1]
        return self._opened()[self.keys[position]]

    def _left_out(self, error):
        self._skips(error)
        self._table, self._pid = None, None  # a reader that failed may read no further

    @property
    def skipped(self):
        """The records left out by on_error="skip" (None without it), in this process and its
        DataLoader's workers."""
        return self._skips.total

    def _position(self, index):
        return index + len(self) if -len(self) <= index < 0 else index

    def __getitems__(self, indices):
        """A DataLoader batch's samples, looked up in one call (DataLoader uses it when it
        batches); under on_error="skip", short of those that fail."""
        try:
            return self._items(indices)
        except tablio.FormatError as error:
            if _carries_errors(self):
                return [_CarriedError(error)]
            raise

    def _items(self, indices):
        positions = [self._position(operator.index(i)) for i in indices]
        try:
            values = self._values(positions)
        except tablio.FormatError:
            if not self._skips:
                raise
            values = []
            for position in positions:
                try:
                    values += self._values([position])
                except tablio.FormatError as e:
                    self._left_out(e)
        values = [_tensors_for(self.options)(v) for v in values]
        return [self.transform(v) for v in values] if self.transform else values

    def _values(self, positions):
        if self.index is not None:
            return self._opened().values_at(positions)
        keys = self.keys
        return self._opened().lookup([keys[i] for i in positions])

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_table"] = state["_pid"] = None
        state["_policy"] = tablio.process_policy()
        return state

    def __setstate__(self, state):
        _take_policy(state.pop("_policy", None))
        self.__dict__.update(state)


class _IndexedKeys(collections.abc.Sequence):
    """The keys of a TableDataset over a shard index, in index order: keys[i] opens only the
    shard that holds the i-th record."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._len = sum(shard.samples for shard in dataset.index.shards)

    def __len__(self):
        return self._len

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return self._dataset._opened().key_at(self._dataset._position(operator.index(i)))


class TableIterableDataset(torch.utils.data.IterableDataset):
    """Streams tables (a list of specifiers, or one naming shards) to DataLoader workers of
    torch.distributed ranks, each record exactly once per epoch across the whole job.

    The epoch's records, the tables' in order (the order of the tables shuffled when
    shuffle=True), are cut into one contiguous range per rank and then per worker, so that a
    worker reads few tables when there are many (by shard) and a part of one when there are
    few (by record). uneven= keeps ranks in step for DDP: "drop" gives each rank
    len // world_size records (fewer than world_size are left out), "pad" gives each
    ceil(len / world_size) by repeating records from the start (fewer than world_size are
    repeated), "allow" gives the ranks what falls to them.

    The rank and world size are rank= and world_size= when given, else torch.distributed's in
    the process that owns the dataset (asked at construction, at set_epoch and when
    DataLoader starts its workers), else the launcher's RANK and WORLD_SIZE, else (0, 1).

    With shuffle=True the order changes with set_epoch(e), from seed and e alone: the
    tables' order, and within each worker a shuffle buffer of shuffle_buffer records (1024
    when 0). batch_size=N yields ready batches (stacked by the C++ reader, for
    DataLoader(batch_size=None)) instead of single values: shuffled records, batched across
    tables, every rank yielding the same number of batches, of which only a rank's last may be
    short (drop_last=True drops it). with_keys=True yields (key, value) pairs, or
    (keys, values) batches. dtype, scale, decode_raw, features and decode (type="sample": a tar
    table's WebDataset samples, whose batches are {extension: batched values} as collate()
    batches them), and the access options allow_network, allow_pipes, confine and limits, as
    tablio.open() takes them (a shard index's shards are never commands). threads=N decodes
    each table's records ahead in N threads of the process that reads it (the same records in
    the same order: plans, resume states and errors are unchanged), and images= decodes a
    sample's jpg and png members, an encoded Datum's image or an Example's image/encoded
    feature there to uint8 arrays, as tablio.open() takes it: with
    batch_size, ready batches come from the main process's threads without DataLoader workers
    (docs/threads.md says when threads beat workers). With shuffle and batch_size, the shuffle
    buffer then holds records undecoded where a decoded value is larger, decoding a batch's once
    it picks them (ds.shuffle_holds: "records" or "outputs").

    The epoch is planned from each shard's number of records. A shard index gives them with no
    pass over the data (tablio.shard_index): "index:PATH_OR_URL" as the specifier, or index=
    PATH_OR_URL; else the index beside the shards of a TFRecord or tar specifier, when there is
    one (index=False counts the records instead). A shard whose size differs from its index's
    is an error when it is opened. Without an index, the records are counted at construction.

    on_error="skip" leaves out a record that fails to decode (a FormatError: a damaged record,
    a value of another type, a decode= function that raised), with a RuntimeWarning naming its
    table and key, counted in ds.skipped and in tablio.torch.DataLoader's state. It counts as
    read, so every rank still yields as many items and a resumed epoch goes on where it stopped:
    a batch is short of it (empty, [], if all of its records failed), and a single record's
    place is taken by the worker's next record (around to its first), as uneven="pad" repeats
    records, so that a resumed epoch yields what the uninterrupted one would have. A
    table that cannot be read past a failure has the rest of its part left out, counted too.
    "raise" (the default) raises the error, ending the epoch.
    """

    def __init__(self, rspecs, type=None, shuffle=False, seed=0, shuffle_buffer=0, uneven="drop",
                 batch_size=None, transform=None, with_keys=False, dtype=None, scale=None, decode_raw=None,
                 features=None, drop_last=False, rank=None, world_size=None, index=None, decode=None,
                 allow_network=True, allow_pipes=True, confine=None, limits=None, on_error="raise", segments=None,
                 threads=None, images=None):
        if uneven not in _plan.UNEVEN:
            raise tablio.UsageError(f"uneven is 'drop', 'pad' or 'allow', not '{uneven}'")
        if batch_size is not None and batch_size < 1:
            raise tablio.UsageError(f"batch_size is a number of records, at least 1, not {batch_size}")
        if isinstance(rspecs, str):
            rspecs = [rspecs]
        type = _dataset_type(rspecs[0] if rspecs else "", type, segments)
        self.type, self.batch_size, self.transform, self.with_keys = type, batch_size, transform, with_keys
        self._skips = _Skips(on_error)
        self.plan_options = _plan.Options(shuffle=bool(shuffle), seed=seed, shuffle_buffer=shuffle_buffer or 1024,
                                          uneven=uneven, unit=batch_size or 1, drop_last=drop_last)
        self.options = {"dtype": dtype, "scale": scale, "decode_raw": decode_raw, "features": features,
                        "decode": decode}
        if segments is not None:
            self.options["segments"] = segments
        # Reading decodes images in threads of its own; counting decodes nothing.
        self._reading = {"threads": threads, "images": images}
        tablio._check_threads(threads)  # now, not in each worker
        tablio._images(images, type, scale)  # refuses a bad one now
        access = _access_options(allow_network, allow_pipes, confine, limits)
        self._given = (rank, world_size)
        _where(rank, world_size)  # refuses a bad pair now
        self.epoch = 0
        self.index = self._index(rspecs, index, access, type)
        if self.index is not None:
            options = None if shard_index.named_by(rspecs[0]) is not None else rspecs[0].partition(":")[0]
            self.index.check_reads(type, options)
            groups = [self.index.rspecs(options)]
            self.tables = groups[0]
            self.sizes = [shard.samples for shard in self.index.shards]
            self.options.update(self.index.options())  # its shards are never commands
        else:
            self.options.update(access)
            # Under the keys their records keep, as tablio.open() reads them.
            access_tuple = shard_index.access(**access)
            groups = [expand_shards(_tablio.reading_rspec(rspec, type, access_tuple), **access) for rspec in rspecs]
            counted = [self._count(shard) for group in groups for shard in group]
            self.tables, self.sizes = [t for t, _ in counted], [n for _, n in counted]
        # A TFRecord table numbers its records (keys 00000000, ...) across all its files: a
        # shard's keys go on from those of the shards before it, as they do when it is read whole.
        self._first_ordinal = [None] * len(self.tables)
        t = 0
        for group in groups:
            ordinal = 0 if group and _tablio.ordinal_keys(group[0]) else None
            for _ in group:
                if ordinal is not None:
                    self._first_ordinal[t] = ordinal
                    ordinal += self.sizes[t]
                t += 1
        self._job = _JobState()
        self._note_where()
        _datasets.add(self)

    @staticmethod
    def _index(rspecs, index, access, type):
        """The shard index that plans the epochs, or None."""
        if len(rspecs) == 1 and (named := shard_index.named_by(rspecs[0])) is not None:
            if index not in (None, True):
                raise tablio.UsageError("give the shard index once: as 'index:PATH' or as index=")
            return shard_index.load(named, **access)
        if isinstance(index, str):
            return shard_index.load(index, **access)
        if index is False or len(rspecs) != 1:
            return None
        found = shard_index.find(rspecs[0], **access)
        if found is not None and found.keys_differ(type, rspecs[0].partition(":")[0]):
            return None  # it lists other keys than the shards are read under: they are counted instead
        return found

    def _count(self, rspec):
        """(the specifier the table is read with, its number of records)."""
        # A sequential pass that reads no value it can skip: a table read in order may repeat
        # keys, which random access would refuse.
        opened = False
        try:
            with tablio.open(rspec, type=self.type, **self.options) as table:
                opened = True
                return rspec, table.skip(sys.maxsize)
        except tablio.FormatError as e:
            if not self._skips:
                raise
            damage = e
        options, _, name = rspec.partition(":")
        keyed = any(o.startswith("key=") for o in options.split(","))
        if (keyed or not opened) and "p" not in options.split(","):
            # on_error="skip" in a table that takes its keys out of its records, where a record
            # that does not decode has lost its key, or in one that cannot be opened whole (an
            # IDX file read at once): under p the table leaves out what does not decode and
            # keeps what comes before damage. What it leaves out is counted here, once: the
            # epoch is planned over the rest.
            permissive = f"{options},p:{name}"
            with tablio.open(permissive, type=self.type, **self.options) as table:
                count = table.skip(sys.maxsize)
                left_out, error = table.left_out, table.error
            if left_out:
                self._skips(error, records=left_out)
            elif error:
                warnings.warn(f"{shard_index.shown(rspec)} cannot be read past its record {count}: what follows is "
                              f"left out ({error})", RuntimeWarning, stacklevel=3)
            return permissive, count
        # on_error="skip": a table damaged past some record (a cut file) has the records before
        # the damage; what it held after is unknown, and left out.
        count = 0
        with tablio.open(rspec, type=self.type, **self.options) as table:
            try:
                while table.skip(1):
                    count += 1
            except tablio.FormatError:
                pass
        warnings.warn(f"{shard_index.shown(rspec)} cannot be read past its record {count}: what follows is left out "
                      f"({damage})", RuntimeWarning, stacklevel=3)
        return rspec, count

    def _note_where(self):
        """Notes the epoch and where this process runs, for its DataLoader workers; in a worker,
        which only reads what its owner noted, nothing."""
        if torch.utils.data.get_worker_info() is not None:
            return
        if os.getpid() != self._job.owner:
            self._job = _JobState()
        self._job.set(self.epoch, *_where(*self._given))

    def _state(self):
        """(epoch, rank, world size): as noted now in the owner, as the owner noted in a worker."""
        self._note_where()
        return self._job.get()

    def set_epoch(self, epoch):
        """Sets the epoch that the next iteration reads: its order comes from seed and epoch."""
        self.epoch = epoch
        self._note_where()

    @property
    def shuffle(self):
        return self.plan_options.shuffle

    def __len__(self):
        """This rank's items in an epoch: records, or batches with batch_size (what each
        rank's DataLoader yields); in an epoch resumed with another configuration, of the
        records it has left."""
        epoch, rank, world = self._state()
        resume = self._resumed()
        left = _resume.remaining(self.sizes, epoch, resume["previous"]) if resume else None
        total = None if left is None else len(left)
        return _plan.items_per_rank(self.sizes, self.plan_options, rank, world, self.batch_size, total)

    def __getstate__(self):
        self._note_where()  # pickled for spawned workers, by the process that owns the DataLoader
        return {**self.__dict__, "_policy": tablio.process_policy()}

    def __setstate__(self, state):
        _take_policy(state.pop("_policy", None))
        self.__dict__.update(state)
        _datasets.add(self)

    def plan(self, worker=0, workers=1):
        """The plan of a worker of this rank for the current epoch (tablio._plan.WorkerPlan)."""
        epoch, rank, world = self._state()
        return _plan.worker_plan(self.sizes, self.plan_options, epoch, rank, world, worker, workers)

    def _resumed(self):
        """The resume tablio.torch.DataLoader gave this iteration, or None."""
        resume = self.__dict__.get("_resume")
        if not resume or resume["epoch"] != self._state()[0]:  # a resume is of its epoch only
            return None
        iteration = self._job.iteration()
        # In the owner, also before the iteration it was loaded for has started (len(loader)).
        owner = torch.utils.data.get_worker_info() is None
        return resume if resume["iteration"] == iteration or (owner and resume["iteration"] == iteration + 1) else None

    def _worker_plan(self, worker, workers):
        """(plan, first item): what this worker reads in this iteration, and from which item."""
        resume = self._resumed()
        if resume is None:
            return self.plan(worker, workers), 0
        epoch, rank, world = self._state()
        state = dict(resume["config"], previous=resume["previous"], world=world, workers=workers)
        plans = _resume.worker_plans(self.sizes, epoch, rank, state, _resume.remaining(self.sizes, epoch,
                                                                                      resume["previous"]))
        taken, rotation = _plan.round_robin([_resume.items(p.records, state) for p in plans], resume["yielded"])
        old = rotation[worker]
        per = 1 if self.batch_size else resume["config"]["records_per_item"]
        return plans[old], taken[old] * per

    def __iter__(self):
        per_fetch = _carries_errors(self)
        return _carrying(self._records(), per_fetch) if per_fetch else self._records()

    def _records(self):
        info = torch.utils.data.get_worker_info()
        if info is not None:
            _in_worker()
        plan, start = self._worker_plan(*((info.id, info.num_workers) if info else (0, 1)))
        transform, with_keys = self.transform, self.with_keys
        skips = (self._skips, self._skips.attribute) if self._skips else (None, None)
        if self.batch_size:
            if self.shuffle_holds == "records":  # decoded once picked: the buffer holds what is smaller
                items = _execute.batches(self._open_records, self.tables, plan, self.batch_size, start, self.sizes,
                                         *skips, decode=_PickedRecords(self, skips[0]))
            else:
                items = _execute.batches(self._open_table, self.tables, plan, self.batch_size, start, self.sizes,
                                         *skips)
        else:
            items = _execute.records(self._open_table, self.tables, plan, start, self.sizes, *skips)
        samples = self.batch_size and self.type == "sample"
        tensors = _tensors_for(self.options)
        if self._skips:
            count = len(plan.order) - start * (self.batch_size or 1)
            self._skips.start(info.id if info else 0, -(-count // self.batch_size) if self.batch_size else count)
        for item, (key, value) in enumerate(items):
            if self._skips:
                self._skips.yielded(item)
            if self.batch_size and not key:  # every record of the batch was left out (on_error)
                yield ([], []) if with_keys else []
                continue
            # A batch of samples, {extension: value} each, as collate() batches them.
            if samples:
                value = _sample_batch(value, tensors)
            else:
                value = tensors(value)
                if self.batch_size and isinstance(value, dict):  # an Example batch's features
                    value = _with_missing(value, len(key))
            if transform:
                value = transform(value)
            yield (key, value) if with_keys else value

    @property
    def skipped(self):
        """The records left out by on_error="skip" (None without it), in this process and its
        DataLoader's workers: in this iteration under tablio.torch.DataLoader, which keeps the
        number in its state."""
        return self._skips.total

    def _epoch_images(self, table, epoch=None):
        """images= as table `table` is read with in `epoch` (the current one): its transform's seed
        drawn from the dataset's seed, the epoch and the table."""
        epoch = self._state()[0] if epoch is None else epoch
        seed = int(_plan._rng(self.plan_options.seed, epoch, "images", table).integers(2**63))
        return tablio._transforms.with_seed(self._reading["images"], seed)

    def transform_draw(self, table, key, width, height, epoch=None):
        """What images='s transform draws in `epoch` (the current one) for the record of `key` of
        table `table` (its index in ds.tables) whose decoded image is width x height: as
        tablio.transform_draw gives it, {"box": (left, top, width, height), "flip": bool}."""
        return tablio.transform_draw(self._epoch_images(table, epoch), width, height, key, type=self.type)

    def _open_table(self, table):
        if self.index is not None:
            shard_index.check_size(self.index.shards[table], self.index.source, self.index.access)
        reading = self._reading
        if reading["images"] is not None:  # draws of the epoch's own, the same for a record whoever reads it
            reading = dict(reading, images=self._epoch_images(table))
        reader = tablio.open(self.tables[table], type=self.type, **self.options, **reading)
        return self._numbered(reader, table)

    def _numbered(self, reader, table):
        first = self._first_ordinal[table]
        return reader if first is None else _Renumbered(reader, first)

    def _open_records(self, table):
        """Table `table` read as its records, undecoded, each with its own key (which its draws
        follow) and its table: what the shuffle buffer holds when shuffle_holds is "records"."""
        if self.index is not None:
            shard_index.check_size(self.index.shards[table], self.index.source, self.index.access)
        access = {k: self.options[k] for k in ("allow_network", "allow_pipes", "confine", "limits") if k in self.options}
        records = tablio.SequentialReader(self.tables[table], self.type, **access, _records=True)
        return self._numbered(_Records(records, table), table)

    @property
    def shuffle_holds(self):
        """What the shuffle buffer holds: "records" where images= decodes values larger than
        their records (the records are read undecoded and a batch's decoded once it picks
        them, in the threads), else "outputs" (values as read); None without one (no shuffle,
        or no batch_size)."""
        if not (self.plan_options.shuffle and self.batch_size):
            return None
        if "_holds" not in self.__dict__:
            self._holds = "records" if self._records_are_smaller() else "outputs"
        return self._holds

    def _records_are_smaller(self):
        """Whether images= makes values larger than the records they come from: an output of
        known size (a crop) against the tables' stored bytes per record, where known; a whole
        decoded image, or a resize alone, always (decoding multiplies a photo's bytes)."""
        images = self._reading["images"]
        if images is None or not _tablio._reads_records(self.type) or self.options.get("segments"):
            return False
        if any(_tablio.record_key_name(spec) for spec in self.tables):  # keys a record keeps: read as values
            return False
        output = tablio._transforms.output_bytes(images, self.type)
        stored = _stored_bytes(self)
        return output is None or stored is None or output > stored


class _Renumbered:
    """A reader of one file of a table whose keys are record numbers: the numbers it gives go
    on from the files before it, as the table read whole numbers them."""

    def __init__(self, reader, first):
        self._reader, self._first = reader, first

    def _key(self, key):
        return _tablio.ordinal_key(int(key) + self._first)

    def _renumbered(self, error):
        """A record's error under the key the table read whole gives the record, as its value has."""
        if not error.key or not error.key.isdigit():
            return error
        key = self._key(error.key)
        message = str(error).replace(f"(key '{error.key}')", f"(key '{key}')", 1)
        return type(error)(message, path=error.path, offset=error.offset, key=key)

    def __next__(self):
        try:
            key, value = next(self._reader)
        except tablio.FormatError as e:
            raise self._renumbered(e) from None
        return self._key(key), value

    def __iter__(self):
        return self

    def _batch(self, n):
        try:
            keys, values = self._reader._batch(n)
        except tablio.FormatError as e:
            raise self._renumbered(e) from None
        return [self._key(k) for k in keys], values

    def skip(self, n):
        try:
            return self._reader.skip(n)
        except tablio.FormatError as e:
            raise self._renumbered(e) from None

    def close(self):
        self._reader.close()


class _Records:
    """A table read as its records (SequentialReader(..., _records=True)): each batch's values
    are (key, record, table, offset) for the records, so that a shuffle buffer holds the key the
    record's draws follow (not the one _Renumbered gives), the table it comes from and where
    (what an error decoding it names)."""

    def __init__(self, reader, table):
        self._reader, self._table = reader, table

    def _batch(self, n):
        keys, records = self._reader._batch(n)
        return keys, [(k, record, self._table, offset) for k, (record, offset) in zip(keys, records)]

    def skip(self, n):
        return self._reader.skip(n)

    def close(self):
        self._reader.close()


class _PickedRecords:
    """Decodes the records a batch picked from the shuffle buffer, in the dataset's threads, as
    its tables read them (images= with each table's draws of the epoch): (keys, values) as
    the tables' own batches would have given them. Under on_error, a record that fails is
    reported and left out of the batch."""

    def __init__(self, ds, on_error):
        self._ds, self._on_error = ds, on_error
        reading, options = ds._reading, ds.options
        self._decoder = _tablio._RecordDecoder(ds.type, options.get("dtype"), options.get("scale"),
                                               options.get("decode_raw"), False,
                                               options.get("features"), tablio._images(reading["images"], ds.type,
                                                                                       options.get("scale")),
                                               max(1, reading["threads"] or 1))
        self._seeds = {}
        self._decode_sample = None
        if options.get("decode") not in (None, False):
            self._decode_sample = tablio.sample.decoder(options["decode"], options.get("limits"))

    def _seed(self, table):
        if table not in self._seeds:
            self._seeds[table] = tablio._transforms.seed_of(self._ds._epoch_images(table))
        return self._seeds[table]

    def _path(self, table):
        """What the errors of table `table`'s records name, as the table's own do: its file."""
        return self._ds.tables[table].partition(":")[2]

    def __call__(self, keys, values):
        keys, values = list(keys), list(values)
        while values:
            try:
                _, decoded = self._decoder.decode([v[0] for v in values], [v[1] for v in values],
                                                  [self._path(v[2]) for v in values],
                                                  [self._seed(v[2]) for v in values], [v[3] for v in values])
            except tablio.FormatError as e:
                at = next((i for i, v in enumerate(values) if v[0] == e.key and self._path(v[2]) == e.path), None)
                if self._on_error is None or at is None:
                    raise
                self._on_error(e, 1)
                del keys[at], values[at]
                continue
            if self._decode_sample:
                decoded = [self._decode_sample(v, k, self._path(r[2]))
                           for v, k, r in zip(decoded, keys, values)]
            return keys, decoded
        return [], []


def _stored_bytes(ds):
    """The tables' stored bytes per record, where their files (or their index) tell it: None
    for remote tables without an index, and commands."""
    total = 0
    for table, spec in enumerate(ds.tables):
        if ds.index is not None:
            size = ds.index.shards[table].size
        else:
            path = spec.partition(":")[2]
            path = os.path.join(path, "data.mdb") if os.path.isdir(path) else path
            size = os.path.getsize(path) if os.path.isfile(path) else None
        if size is None:
            return None
        total += size
    records = sum(ds.sizes)
    return total / records if records else None


class DataLoader(torch.utils.data.DataLoader):
    """torch's DataLoader with state_dict() and load_state_dict(state), as torchdata's
    StatefulDataLoader has them, over a TableIterableDataset (or a TableDataset sampled by
    tablio.torch.DistributedSampler): a training job checkpoints its loader with its model
    and, restarted, goes on exactly where it stopped.

    The state is a plain dict (JSON-able) computed in this process from how many items the
    loader has yielded this epoch: which worker produced which follows from DataLoader's
    round robin over its workers and the epoch's plan. Under DDP, where ranks step together,
    it is the same dict on every rank at the same step, so one saved state restores the job
    (but for "skipped", each rank's own count under the dataset's on_error="skip").

    load_state_dict(state) applies to the next iteration, of the state's epoch (it sets the
    dataset's epoch): with the same world size, workers and batch size, it yields exactly what
    the uninterrupted run would have yielded after that point, in the same order; with
    others (elastic), every record of the epoch that no rank had consumed, exactly once
    across the new job, ranks in step as the dataset's uneven= keeps them. Persistent workers
    are started anew for it.
    """

    def __init__(self, dataset, *args, **kwargs):
        super().__init__(dataset, *args, **kwargs)
        self._pending = None  # a loaded state, for the next iteration
        self._current = None  # the state of the iteration under way, or last run
        self._skipped_before, self._resumed_at = 0, 0  # on_error="skip": where this iteration began
        if not isinstance(dataset, TableIterableDataset) and not isinstance(self._sampler_of(), DistributedSampler):
            raise tablio.UsageError("tablio.torch.DataLoader resumes a TableIterableDataset, or a dataset sampled by "
                                    "tablio.torch.DistributedSampler")
        if isinstance(dataset, TableIterableDataset) and dataset.batch_size and (self.batch_size or 1) > 1:
            raise tablio.UsageError(f"the dataset yields batches (its batch_size={dataset.batch_size}): batch them "
                                    "once, with DataLoader(dataset, batch_size=None)")
        self.collate_fn = _CollateCarried(self.collate_fn)  # passes a carried error through

    def _sampler_of(self):
        if isinstance(self.dataset, torch.utils.data.IterableDataset):
            return None
        return self.batch_sampler.sampler if self.batch_sampler is not None else self.sampler

    def _config(self):
        dataset = self.dataset
        if isinstance(dataset, TableIterableDataset):
            _, _, world = dataset._state()
            per = dataset.batch_size or self.batch_size or 1
            return _resume.config(dataset.sizes, dataset.plan_options, world, self.num_workers, per,
                                  self.drop_last and not dataset.batch_size)
        sampler = self._sampler_of()
        return sampler._config(self.batch_size or 1)

    def state_dict(self):
        """Where the loader stands: {"epoch", "yielded", the configuration, "previous"}, and
        under a TableIterableDataset's on_error="skip", "skipped": the records this rank
        ("skipped_rank") left out before the items it has yielded in the epoch, the one count
        that differs between ranks (sum it over them for the job's; a resume of the same
        configuration restores it on the rank that saved it, an elastic one counts anew)."""
        if self._pending is not None:
            return dict(self._pending)
        if self._current is not None:
            state = dict(self._current)
        else:
            state = dict(self._config(), epoch=self._epoch(), yielded=0, previous=None)
        skips = getattr(self.dataset, "_skips", None)
        if skips and isinstance(self.dataset, TableIterableDataset):
            state["skipped"] = self._skipped_before + skips.before(state["yielded"] - self._resumed_at)
            state["skipped_rank"] = self.dataset._state()[1]
        return state

    def load_state_dict(self, state):
        """Resumes from a state that state_dict() gave (this job's or a job of another size)."""
        state = dict(state)
        if "yielded" not in state or "epoch" not in state:
            raise tablio.UsageError("a loader state is what tablio.torch.DataLoader.state_dict() returned")
        sizes = self.dataset.sizes if isinstance(self.dataset, TableIterableDataset) else None
        try:
            if sizes is not None:
                _resume.check_tables(state, sizes)
            else:
                self._sampler_of()._check(state)
            _resume.check_order(state, self._config())
        except ValueError as e:
            raise tablio.UsageError(f"cannot resume: {e}") from None
        if isinstance(self.dataset, TableIterableDataset):
            self.dataset.set_epoch(state["epoch"])
        else:
            self._sampler_of().set_epoch(state["epoch"])
        config = self._config()
        if _resume.same_config(state, config):
            previous, yielded = state.get("previous"), state["yielded"]
        else:  # elastic: plan what the earlier runs left
            previous, yielded = state, 0
        self._pending = state
        self._resume_with({"previous": previous, "yielded": yielded, "config": config}, upcoming=True)
        self._iterator = None  # persistent workers start again, with the resume

    def _resume_with(self, resume, upcoming=False):
        """Gives the dataset (or sampler) the resume of the next iteration (None: none)."""
        if isinstance(self.dataset, TableIterableDataset):
            job = self.dataset._job
            iteration = job.iteration() + 1 if upcoming else job.iteration()
            self.dataset._resume = None if resume is None else dict(resume, iteration=iteration,
                                                                     epoch=self.dataset.epoch)
        else:
            sampler = self._sampler_of()
            sampler._resume = None if resume is None else dict(resume, epoch=sampler.epoch)

    def _epoch(self):
        if isinstance(self.dataset, TableIterableDataset):
            return self.dataset.epoch
        return self._sampler_of().epoch

    def __iter__(self):
        loaded, self._pending = self._pending, None
        epoch, config = self._epoch(), self._config()
        resume = None
        if loaded is not None:
            resume = (self.dataset.__dict__.get("_resume") if isinstance(self.dataset, TableIterableDataset)
                      else self._sampler_of()._resume)
            if loaded["epoch"] != epoch or not _resume.same_config(resume["config"], config):
                warnings.warn(f"the loaded state (of epoch {loaded['epoch']}) does not apply to this iteration (of epoch "
                              f"{epoch}, or with another configuration than when it was loaded): it starts from the "
                              "beginning", RuntimeWarning, stacklevel=2)
                resume = None
        if isinstance(self.dataset, TableIterableDataset):
            self.dataset._job.next_iteration()
        self._resume_with(resume)
        previous, yielded = (resume["previous"], resume["yielded"]) if resume else (None, 0)
        self._current = dict(config, epoch=epoch, yielded=yielded, previous=previous)
        # Records left out before this iteration's first item, by the run this one resumes: the
        # count of this rank's, when the state is (an elastic resume counts anew).
        same_rank = resume is not None and (loaded.get("skipped_rank") == self.dataset._state()[1]
                                            if isinstance(self.dataset, TableIterableDataset) else False)
        self._skipped_before = loaded.get("skipped", 0) if same_rank and resume["yielded"] else 0
        self._resumed_at = yielded
        if getattr(self.dataset, "_skips", None) and isinstance(self.dataset, TableIterableDataset):
            self.dataset._skips.provide_board(max(self.num_workers, 1), 2 * (self.prefetch_factor or 2) + 16)
        # The workers this starts give a FormatError as an item, which _Counted raises whole
        # (see _CarriedError); only they: the same dataset under another loader raises as usual.
        self.dataset._carried_errors = self.batch_size or 1
        try:
            iterator = super().__iter__()
        finally:
            self.dataset._carried_errors = 0
        return _Counted(iterator, self._current)


class _Counted:
    """A DataLoader's iterator that counts the items it yields into its loader's state."""

    def __init__(self, iterator, state):
        self._iterator, self._state = iterator, state

    def __iter__(self):
        return self

    def __next__(self):
        item = next(self._iterator)
        if isinstance(item, _CarriedError):
            raise item.error
        self._state["yielded"] += 1
        return item

    def __len__(self):
        return len(self._iterator)


class DistributedSampler(torch.utils.data.Sampler):
    """Splits a map-style dataset (TableDataset) over torch.distributed ranks as torch's
    DistributedSampler does, each rank one contiguous part of the epoch's order (shuffled from
    seed and epoch when shuffle=True; drop_last=False repeats indices from the start so that
    every rank has as many, drop_last=True leaves out the last len % world), and resumes as
    tablio.torch.DataLoader asks: exactly where it stopped, or, over another number of ranks,
    with every index of the epoch that no rank had consumed, exactly once across the new ranks.
    num_replicas and rank as TableIterableDataset's world_size and rank are found."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        self.size = len(dataset)
        self.rank, self.world = _where(rank, num_replicas)
        self.options = _plan.Options(shuffle=bool(shuffle), seed=seed, uneven="drop" if drop_last else "pad")
        self.epoch = 0
        self._resume = None  # set by tablio.torch.DataLoader for its next iteration

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _config(self, per):
        return _resume.config([self.size], self.options, self.world, 1, per, False)

    def _check(self, state):
        _resume.check_tables(state, [self.size])

    def _order(self):
        order = np.arange(self.size)
        if self.options.shuffle:
            _plan._rng(self.options.seed, self.epoch, "sampler").shuffle(order)
        return order

    def _positions(self, rank, world, left):
        """A rank's places in the epoch's order, over `left` (None: all)."""
        total = self.size if left is None else len(left)
        start, count = _plan.rank_span(total, rank, world, self.options)
        places = (start + np.arange(count)) % total if total else np.zeros(0, np.int64)
        return places if left is None else left[places]

    def _remaining(self, previous):
        if not previous:
            return None
        before = self._remaining(previous.get("previous"))
        left = np.zeros(self.size, bool)
        left[slice(None) if before is None else before] = True
        for rank in range(previous["world"]):
            consumed = previous["yielded"] * previous["records_per_item"]
            left[self._positions(rank, previous["world"], before)[:consumed]] = False
        return np.flatnonzero(left)

    def _indices(self):
        resume = self._resume if self._resume and self._resume["epoch"] == self.epoch else None  # of its epoch
        resume = resume or {"previous": None, "yielded": 0, "config": {"records_per_item": 1}}
        places = self._positions(self.rank, self.world, self._remaining(resume["previous"]))
        return self._order()[places[resume["yielded"] * resume["config"]["records_per_item"]:]]

    def __iter__(self):
        indices = self._indices()
        self._resume = None
        return iter(indices.tolist())

    def __len__(self):
        return len(self._indices())
