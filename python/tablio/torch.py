"""PyTorch datasets over tablio tables (imported only when used: needs torch).

TableDataset is map-style, over any table with random access. TableIterableDataset streams
a list of tables or shards and splits them over DataLoader workers and torch.distributed
ranks together, so that each record is delivered exactly once per epoch across the job, with
every rank taking the same number of samples (see uneven=).

Handles are opened lazily in the process that reads (a DataLoader worker, after fork or
spawn): no LMDB environment, mapping or pipe is shared across a fork.
"""

import itertools
import os
import random

import numpy as np
import torch
import torch.utils.data

import tablio
from tablio import _tablio

__all__ = ["TableDataset", "TableIterableDataset", "to_tensors", "collate", "expand_shards"]


def to_tensors(value):
    """numpy arrays in a value (alone, in tuples, lists or dicts) as tensors, without copying
    writable arrays (torch.from_numpy); read-only arrays (IDX views) are copied."""
    return _converted(value, _tensor)


def _tensor(array):
    if not array.flags.writeable or not array.dtype.isnative:
        array = np.array(array, dtype=array.dtype.newbyteorder("="))
    return torch.from_numpy(array)


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


def _read_to_tensors(value):
    """to_tensors for what a table reader returned."""
    # A reader's values (as the datasets read them: never view=True) hold arrays of their own,
    # writable and in native byte order, so they become tensors with no check: checking each
    # array's flags cost as much as the conversion itself.
    return _converted(value, torch.from_numpy)


def collate(samples):
    """DataLoader's collate_fn for dict values (Examples): each feature stacked when its
    tensors agree in shape, else kept as a list; other values as default_collate does."""
    if samples and isinstance(samples[0], dict):
        out = {}
        for name in samples[0]:
            values = [s.get(name) for s in samples]
            if all(isinstance(v, torch.Tensor) for v in values) and len({tuple(v.shape) for v in values}) == 1:
                out[name] = torch.stack(values)
            else:
                out[name] = values
        return out
    return torch.utils.data.default_collate(samples)


def expand_shards(rspec):
    """One specifier per shard. The files of a TFRecord or tar table ("a,b", globs such as
    "train-*-of-00016", TensorFlow's "name@16", "shard-%06d.tar") are expanded as the C++
    tables expand them; any other table (an scp, an LMDB, an archive) is one shard."""
    return _tablio.table_files(rspec)


def _distributed():
    """(rank, world size) of torch.distributed when it is initialized, else (0, 1)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


class TableDataset(torch.utils.data.Dataset):
    """Map-style: ds[i] is the value of the i-th key in table order; len(ds) and ds.keys.

    Any table with random access: scp, ark (indexed when opened), TFRecord, LMDB, IDX, tar.
    Works with any sampler, DistributedSampler included. dtype, scale, decode_raw and features
    as tablio.open() takes them (scale=1/255 gives a Datum's images as float tensors, converted
    in C++; features=["image_raw", "label"] reads only those of an Example). transform is
    applied to the value (after numpy arrays become tensors).
    """

    def __init__(self, rspec, type="matrix", transform=None, dtype=None, scale=None, decode_raw=None,
                 features=None):
        self.rspec, self.type, self.transform = rspec, type, transform
        self.options = {"dtype": dtype, "scale": scale, "decode_raw": decode_raw, "features": features}
        with self._reopen() as table:
            self.keys = table.keys()
        self._table = None
        self._pid = None

    def _reopen(self):
        return tablio.random_access(self.rspec, type=self.type, **self.options)

    def __len__(self):
        return len(self.keys)

    def _opened(self):
        if self._pid != os.getpid():  # never a handle from before a fork
            self._table, self._pid = self._reopen(), os.getpid()
        return self._table

    def __getitem__(self, index):
        value = _read_to_tensors(self._opened()[self.keys[index]])
        return self.transform(value) if self.transform else value

    def __getitems__(self, indices):
        """A DataLoader batch's samples, looked up in one call (DataLoader uses it when it batches)."""
        keys = self.keys
        values = [_read_to_tensors(v) for v in self._opened().lookup([keys[i] for i in indices])]
        return [self.transform(v) for v in values] if self.transform else values

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_table"] = state["_pid"] = None
        return state


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

    With shuffle=True the order changes with set_epoch(e), from seed and e alone: the
    tables' order, and within each worker a shuffle buffer of shuffle_buffer records (1024
    when 0). batch_size=N yields ready batches (stacked by the C++ reader, for
    DataLoader(batch_size=None)) instead of single values; with_keys=True yields
    (key, value) pairs, or (keys, values) batches. dtype, scale, decode_raw and features as
    tablio.open() takes them.
    """

    def __init__(self, rspecs, type="matrix", shuffle=False, seed=0, shuffle_buffer=0, uneven="drop",
                 batch_size=None, transform=None, with_keys=False, dtype=None, scale=None, decode_raw=None,
                 features=None):
        if uneven not in ("drop", "pad", "allow"):
            raise tablio.UsageError(f"uneven is 'drop', 'pad' or 'allow', not '{uneven}'")
        if isinstance(rspecs, str):
            rspecs = [rspecs]
        self.tables = [shard for rspec in rspecs for shard in expand_shards(rspec)]
        self.type, self.shuffle, self.seed, self.uneven = type, shuffle, seed, uneven
        self.shuffle_buffer = shuffle_buffer or 1024
        self.batch_size, self.transform, self.with_keys = batch_size, transform, with_keys
        self.options = {"dtype": dtype, "scale": scale, "decode_raw": decode_raw, "features": features}
        self.epoch = 0
        self.sizes = [self._count(t) for t in self.tables]

    def _count(self, rspec):
        with tablio.random_access(rspec, type=self.type, **self.options) as table:
            return len(table)

    def set_epoch(self, epoch):
        """Sets the epoch that the next iteration reads: its order comes from seed and epoch."""
        self.epoch = epoch

    def __len__(self):
        """Records per rank this epoch (what each rank's DataLoader yields, in samples)."""
        rank, world = _distributed()
        return self._rank_range(sum(self.sizes), rank, world)[2]

    def _rank_range(self, total, rank, world):
        """(start, stop, count) in the epoch's record stream for a rank; stop may pass total
        (pad), wrapping to the start."""
        if self.uneven == "drop":
            each = total // world
            return rank * each, (rank + 1) * each, each
        if self.uneven == "pad":
            each = -(-total // world)
            return rank * each, (rank + 1) * each, each
        start, stop = total * rank // world, total * (rank + 1) // world
        return start, stop, stop - start

    def _order(self):
        order = list(range(len(self.tables)))
        if self.shuffle:
            random.Random(f"{self.seed}/{self.epoch}").shuffle(order)
        return order

    def _ranges(self):
        """This worker's [(table, first, count)] over the epoch's stream."""
        rank, world = _distributed()
        info = torch.utils.data.get_worker_info()
        worker, workers = (info.id, info.num_workers) if info else (0, 1)
        order = self._order()
        total = sum(self.sizes)
        start, stop, count = self._rank_range(total, rank, world)
        first = start + count * worker // workers
        last = start + count * (worker + 1) // workers
        pieces = []
        at = first
        while at < last and total:
            position = at % total  # past the end: the padding wraps to the start
            offset = 0
            for table in order:
                if position < offset + self.sizes[table]:
                    take = min(last - at, offset + self.sizes[table] - position)
                    pieces.append((table, position - offset, take))
                    at += take
                    break
                offset += self.sizes[table]
        return pieces, rank, worker

    def _stream(self, pieces):
        for table, first, count in pieces:
            with tablio.open(self.tables[table], type=self.type, **self.options) as reader:
                if reader.skip(first) != first:
                    self._fewer_records(table)
                if self.batch_size:
                    while count > 0:
                        keys, values = reader._batch(min(self.batch_size, count))
                        if not keys:
                            self._fewer_records(table)
                        count -= len(keys)
                        yield keys, values
                else:
                    taken = 0
                    for taken, entry in enumerate(itertools.islice(reader, count), 1):
                        yield entry
                    if taken < count:
                        self._fewer_records(table)

    def _fewer_records(self, table):
        """A table that shrank since it was counted would leave ranks out of step: an error."""
        raise tablio.FormatError(f"{self.tables[table]} has fewer records than when it was counted",
                                 self.tables[table])

    def __iter__(self):
        pieces, rank, worker = self._ranges()
        stream = self._stream(pieces)
        if self.shuffle and not self.batch_size:
            stream = self._shuffled(stream, random.Random(f"{self.seed}/{self.epoch}/{rank}/{worker}"))
        transform, with_keys = self.transform, self.with_keys
        for key, value in stream:
            value = _read_to_tensors(value)
            if transform:
                value = transform(value)
            yield (key, value) if with_keys else value

    def _shuffled(self, stream, rng):
        buffer = []
        for item in stream:
            if len(buffer) < self.shuffle_buffer:
                buffer.append(item)
                continue
            i = rng.randrange(len(buffer))
            buffer[i], item = item, buffer[i]
            yield item
        rng.shuffle(buffer)
        yield from buffer
