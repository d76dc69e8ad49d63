"""The plan of an epoch: which records each rank and DataLoader worker of a job reads, and in
which order it hands them out.

A pure function of the tables' record counts, the seed, the epoch, the rank and world size,
the worker and worker count, and the dataset's options: no I/O, no torch, no clock, nothing
that one process holds alone. Every process of a job computes the same plan, so a record
is delivered exactly once per epoch across ranks and workers, and a job that knows how far
each worker got can tell which records are consumed without asking anyone.

The epoch's stream is the tables' records, the tables in epoch order. Each rank takes one
contiguous span of it (uneven= decides its length), each worker one contiguous part of its
rank's span, cut at multiples of `unit` records (a dataset's batch size) so that only the
rank's last batch can be short. A worker reads its part in stream order and hands records
out through a shuffle buffer (shuffle=True) or as read.
"""

import hashlib
import random
from typing import NamedTuple

import numpy as np

UNEVEN = ("drop", "pad", "allow")


class Options(NamedTuple):
    """What a dataset asks of its epochs."""

    shuffle: bool = False
    seed: int = 0
    shuffle_buffer: int = 1024  # records a worker mixes at a time
    uneven: str = "drop"  # "drop", "pad" or "allow": see rank_span
    unit: int = 1  # workers' parts are cut at multiples of this many records
    drop_last: bool = False  # a rank's records are cut to a multiple of unit


class Piece(NamedTuple):
    """`count` records of table `table`, from its record `first`."""

    table: int
    first: int
    count: int


def table_order(n_tables, options, epoch):
    """The tables in the epoch's order: shuffled from the seed and the epoch when shuffling."""
    order = list(range(n_tables))
    if options.shuffle:
        random.Random(f"{options.seed}/{epoch}").shuffle(order)
    return order


def rank_span(total, rank, world, options):
    """(start, count): the rank's records in the epoch's stream, which may run past the end
    (under "pad") and then wrap to its start.

    "drop": each rank takes total // world records, and fewer than world are left out;
    "pad": each takes ceil(total / world), and fewer than world are read twice;
    "allow": the ranks split all records, and may differ by one.
    """
    if options.uneven == "drop":
        each = total // world
        start = rank * each
    elif options.uneven == "pad":
        each = -(-total // world) if total else 0
        start = rank * each
    else:
        start = total * rank // world
        each = total * (rank + 1) // world - start
    if options.drop_last:
        each -= each % options.unit
    return start, each


def worker_span(count, worker, workers, unit):
    """(first, count): a worker's part of its rank's `count` records, cut at multiples of unit."""
    units = -(-count // unit)
    first = units * worker // workers * unit
    last = min(units * (worker + 1) // workers * unit, count)
    return first, max(0, last - first)


def pieces(sizes, order, start, count):
    """The pieces of tables that hold the stream's records [start, start + count), in order;
    positions past the end wrap to the start."""
    total = sum(sizes)
    out = []
    at, end = start, start + count
    while at < end and total:
        position = at % total
        offset = 0
        for table in order:
            if position < offset + sizes[table]:
                take = min(end - at, offset + sizes[table] - position)
                out.append(Piece(table, position - offset, take))
                at += take
                break
            offset += sizes[table]
    return out


def _rng(*parts):
    """numpy's generator seeded from parts, the same in every process and on every platform."""
    digest = hashlib.sha256("/".join(str(p) for p in parts).encode()).digest()
    return np.random.Generator(np.random.PCG64(int.from_bytes(digest[:16], "little")))


def buffered_order(n, size, rng):
    """The order in which a shuffle buffer of `size` records hands out records 0..n-1 read in
    that order: it fills up, then each record read takes the place of one picked at random,
    which is handed out; at the end the rest come out in random order (as tf.data's shuffle).
    Computed for all records at once, from the positions alone."""
    if n <= size:
        return rng.permutation(n)
    picks = rng.integers(0, size, n - size)  # the slot record size + i goes into
    steps = np.arange(size, n)
    by_slot = np.argsort(picks, kind="stable")  # each slot's arrivals, in the order they came
    slots, arrivals = picks[by_slot], steps[by_slot]
    first = np.empty(len(slots), bool)
    first[0] = True
    np.not_equal(slots[1:], slots[:-1], out=first[1:])
    # An arrival hands out the record that was in its slot: the slot's previous arrival, or
    # the record that first filled it (records 0..size-1 fill slots 0..size-1).
    handed = np.where(first, slots, np.roll(arrivals, 1))
    out = np.empty(n, np.int64)
    out[by_slot] = handed
    last = np.arange(size)
    ends = np.append(first[1:], True)  # each slot's last arrival
    last[slots[ends]] = arrivals[ends]
    out[n - size:] = last[rng.permutation(size)]
    return out


class WorkerPlan(NamedTuple):
    """What one worker of one rank does in one epoch."""

    pieces: list  # [Piece]: what it reads, in order
    records: int  # how many it hands out
    order: np.ndarray  # the order it hands them out in: indexes into what it reads
    positions: np.ndarray = None  # their places in the epoch's stream, in the order handed out
    span: int = None  # how many records its pieces hold, when it reads past some (else records)

    def items(self, batch_size):
        """How many items it yields: records, or batches of batch_size."""
        return -(-self.records // batch_size) if batch_size else self.records


# A resumed epoch skips the gaps that earlier runs consumed by reading past them when they are
# at most this many records, and by opening its tables again at the next wanted record beyond.
_SKIP_READING = 1024


def worker_plan(sizes, options, epoch, rank, world, worker, workers, positions=None, salt=()):
    """The plan of worker `worker` of `workers` in rank `rank` of `world`, for the epoch: over
    all of the epoch's stream, or over `positions`, the places in it still to deliver (a
    resumed epoch's, in stream order)."""
    order = table_order(len(sizes), options, epoch)
    total = sum(sizes) if positions is None else len(positions)
    start, count = rank_span(total, rank, world, options)
    first, records = worker_span(count, worker, workers, options.unit)
    if options.shuffle:
        handout = buffered_order(records, options.shuffle_buffer, _rng(options.seed, epoch, rank, worker, *salt))
    else:
        handout = np.arange(records)
    if positions is None:
        where = (start + first + handout) % total if total else handout
        return WorkerPlan(pieces(sizes, order, start + first, records), records, handout, where)
    wanted = positions[(start + first + np.arange(records)) % total] if total else np.zeros(0, np.int64)
    # Runs of the stream to read: a new one where the positions go back (a padded rank's wrap)
    # or jump far ahead; the records between wanted ones in a run are skipped unread.
    cuts = np.flatnonzero((np.diff(wanted) <= 0) | (np.diff(wanted) > _SKIP_READING)) + 1
    runs = np.split(np.arange(records), cuts) if records else []
    read, reading_index, at = [], np.empty(records, np.int64), 0
    for run in runs:
        lo, hi = int(wanted[run[0]]), int(wanted[run[-1]]) + 1
        read += pieces(sizes, order, lo, hi - lo)
        reading_index[run] = at + wanted[run] - lo
        at += hi - lo
    return WorkerPlan(read, records, reading_index[handout], wanted[handout], at)


def items_per_rank(sizes, options, rank, world, batch_size, total=None):
    """How many items (records, or batches of batch_size) a rank yields in an epoch (of
    `total` records when it is a resumed epoch's rest)."""
    count = rank_span(sum(sizes) if total is None else total, rank, world, options)[1]
    return -(-count // batch_size) if batch_size else count


def round_robin(items, yielded):
    """(taken, rotation) after `yielded` items of DataLoader's round robin over workers that
    yield items[w] items each (it asks each worker in turn, and stops asking one that has
    ended): how many items each worker had handed out, and the workers in the order in which
    the round robin goes on (those that ended, last)."""
    items = np.asarray(items, np.int64)
    if yielded > int(items.sum()):
        raise ValueError(f"{yielded} items yielded, but the epoch has {int(items.sum())}")
    lo, hi = 0, int(items.max(initial=0))
    while lo < hi:  # the rounds completed: the most with no more items than yielded
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if int(np.minimum(items, mid).sum()) <= yielded else (lo, mid - 1)
    taken = np.minimum(items, lo)
    active = [w for w in range(len(items)) if items[w] > lo]
    served = yielded - int(taken.sum())
    taken[active[:served]] += 1
    ended = [w for w in range(len(items)) if items[w] <= lo]
    return taken.tolist(), active[served:] + active[:served] + ended
