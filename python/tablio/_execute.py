"""Carrying out a worker's plan (tablio._plan): reading its pieces of tables in order and
handing their records out in the plan's order, one by one or in batches stacked as the C++
reader stacks them. No torch: the datasets turn what this yields into tensors.

`start` skips the first records (or batches) of the plan's order without handing them out:
records that are not handed out later are skipped unread, and the others are read again in
the order the plan reads them, so that what follows is exactly what would have followed.
"""

import numpy as np

import tablio
from tablio import shard_index


class _Pieces:
    """Reads a plan's pieces of tables in order: records one by one, or chunks of them."""

    def __init__(self, open_table, names, pieces, sizes=None):
        self._open, self._names, self._pieces, self._sizes = open_table, names, list(pieces), sizes
        self._reader, self._left, self._next_piece = None, 0, 0
        self._to_end = False  # whether the current piece ends its table

    def _current(self):
        """The reader of the piece that has records left, opened and moved to them."""
        while self._left == 0:
            self.close()
            if self._next_piece == len(self._pieces):
                raise tablio.UsageError("a plan's pieces ran out before its records")  # a bug if ever
            piece = self._pieces[self._next_piece]
            self._next_piece += 1
            self._reader, self._left, self._table = self._open(piece.table), piece.count, piece.table
            self._to_end = self._sizes is not None and piece.first + piece.count == self._sizes[piece.table]
            if self._reader.skip(piece.first) != piece.first:
                self._fewer_records()
        return self._reader

    def _consumed(self, n):
        self._left -= n
        # A piece that ends its table: the table must end there too, or records it gained
        # since it was counted (or that its index leaves out) would be lost without a word.
        if self._left == 0 and self._to_end and self._reader.skip(1):
            name = shard_index.shown(self._names[self._table])
            raise tablio.FormatError(f"{name} has more than the {self._sizes[self._table]} records it had when it "
                                     "was counted (or that its shard index says)", name.split(":", 1)[-1])

    def read(self, n):
        """Up to n records of the current piece (at least one): (keys, values)."""
        reader = self._current()
        keys, values = reader._batch(min(n, self._left))
        if not keys:
            self._fewer_records()
        self._consumed(len(keys))
        return keys, values

    def next(self):
        """The next record: (key, value)."""
        reader = self._current()
        entry = next(reader, None)
        if entry is None:
            self._fewer_records()
        self._consumed(1)
        return entry

    def skip(self, n):
        """Moves past n records without reading their values; pieces skipped whole are not
        opened at all (a resumed epoch passes over what it consumed at no cost)."""
        while n:
            if self._left == 0 and self._next_piece < len(self._pieces) and self._pieces[self._next_piece].count <= n:
                self.close()
                n -= self._pieces[self._next_piece].count
                self._next_piece += 1
                continue
            reader = self._current()
            k = min(n, self._left)
            if reader.skip(k) != k:
                self._fewer_records()
            self._consumed(k)
            n -= k

    def close(self):
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _fewer_records(self):
        # A table that shrank since it was counted would put ranks out of step: an error.
        name = shard_index.shown(self._names[self._table])
        raise tablio.FormatError(f"{name} has fewer records than when it was counted (or than its shard index says)",
                                 name.split(":", 1)[-1])


class _Reading:
    """Where reading a plan's records stands: the next record's index in the plan's reading,
    and which records are wanted (those it hands out from `start` on), the others (handed out
    before, or consumed by an earlier run of a resumed epoch) being skipped unread."""

    def __init__(self, source, plan, start):
        self.source, self.next = source, 0
        self.wanted = None
        span = plan.records if plan.span is None else plan.span
        if start or span != plan.records:
            self.wanted = np.zeros(span, bool)
            self.wanted[plan.order[start:]] = True

    def through(self, last, take):
        """Reads on past record `last`: take(first) reads wanted records from `first` and
        returns how many it read."""
        while self.next <= last:
            if self.wanted is None or self.wanted[self.next]:
                self.next += take(self.next)
            else:
                rest = self.wanted[self.next:last + 1]
                found = np.flatnonzero(rest)
                run = int(found[0]) if len(found) else len(rest)
                self.source.skip(run)
                self.next += run


def records(open_table, names, plan, start=0, sizes=None):
    """Yields (key, value) for the plan's records from its start-th, in its order; a table
    that has more records than `sizes` says is an error."""
    source = _Pieces(open_table, names, plan.pieces, sizes)
    reading = _Reading(source, plan, start)
    held = {}  # records read and not yet handed out, by index

    def take(at):
        held[at] = source.next()
        return 1

    try:
        for i in plan.order[start:].tolist():
            reading.through(i, take)
            yield held.pop(i)
    finally:
        source.close()


def batches(open_table, names, plan, batch_size, start=0, sizes=None):
    """Yields (keys, values) for the plan's records in batches of batch_size (the last may be
    shorter), from its start-th batch, in its order; values stacked as the C++ reader stacks
    them, across the pieces a batch spans."""
    source = _Pieces(open_table, names, plan.pieces, sizes)
    reading = _Reading(source, plan, start * batch_size)
    pool = _Pool()
    try:
        order = plan.order
        for first in range(start * batch_size, len(order), batch_size):
            picked = order[first:first + batch_size]
            last = int(picked.max())

            def take(at):
                keys, values = source.read(max(last + 1 - at, batch_size))
                pool.add(at, keys, values)
                return len(keys)

            reading.through(last, take)
            yield pool.take(picked)
    finally:
        source.close()


class _Chunk:
    """Records read in one call (or gathered from several): their indexes in the plan's
    reading, keys and stacked values, and which of them are handed out."""

    def __init__(self, indexes, keys, values):
        self.indexes, self.keys, self.values = indexes, keys, values
        self.taken = np.zeros(len(indexes), bool)
        self.left = len(indexes)


class _Pool:
    """Records read and not yet handed out. A batch of consecutive records of one chunk is a
    view of it; any other is gathered. A chunk goes when its last record has; when records
    that linger (in a shuffle buffer) keep chunks alive that hold twice as many records as are
    left, the records left are gathered into one chunk."""

    def __init__(self):
        self._chunks = []

    def add(self, first, keys, values):
        self._chunks.append(_Chunk(np.arange(first, first + len(keys)), keys, values))

    def take(self, picked):
        """(keys, values) of the records `picked`, in that order."""
        found = []  # (chunk, positions in picked, rows in the chunk)
        for chunk in self._chunks:
            at = np.searchsorted(chunk.indexes, picked)
            hit = np.flatnonzero(chunk.indexes[np.minimum(at, len(chunk.indexes) - 1)] == picked)
            if len(hit):
                found.append((chunk, hit, at[hit]))
        if len(found) == 1 and len(found[0][2]) == len(picked) and (np.diff(found[0][2]) == 1).all():
            chunk, _, where = found[0]
            lo, hi = int(where[0]), int(where[-1]) + 1
            whole = lo == 0 and hi == len(chunk.indexes)
            keys, values = (chunk.keys, chunk.values) if whole else (chunk.keys[lo:hi], rows(chunk.values, slice(lo, hi)))
        else:
            keys, values = self._gather(found)
        for chunk, _, where in found:
            chunk.taken[where] = True
            chunk.left -= len(where)
        self._chunks = [chunk for chunk in self._chunks if chunk.left]
        held, left = sum(len(c.indexes) for c in self._chunks), sum(c.left for c in self._chunks)
        if held > 2 * left + 2 * len(picked):
            self._compact()
        return keys, values

    @staticmethod
    def _gather(found):
        parts, keys, counts, positions = [], [], [], []
        for chunk, hit, where in found:
            keys += [chunk.keys[i] for i in where.tolist()]
            parts.append(rows(chunk.values, where))
            counts.append(len(where))
            positions.append(hit)
        values = concat(parts, counts)
        back = np.argsort(np.concatenate(positions), kind="stable")  # into the order asked for
        return [keys[i] for i in back.tolist()], rows(values, back)

    def _compact(self):
        parts, keys, counts, indexes = [], [], [], []
        for chunk in self._chunks:
            where = np.flatnonzero(~chunk.taken)
            keys += [chunk.keys[i] for i in where.tolist()]
            parts.append(rows(chunk.values, where))
            counts.append(len(where))
            indexes.append(chunk.indexes[where])
        self._chunks = [_Chunk(np.concatenate(indexes), keys, concat(parts, counts))]


def rows(values, index):
    """The records `index` (an index array or a slice) of a batch's values."""
    if isinstance(values, np.ndarray):
        return values[index]
    if isinstance(values, list):
        if isinstance(index, slice):
            return values[index]
        return [values[i] for i in index.tolist()]
    if isinstance(values, tuple):
        return tuple(rows(v, index) for v in values)
    if isinstance(values, dict):
        return {name: rows(v, index) for name, v in values.items()}
    raise TypeError(f"a batch's values are arrays, lists, tuples or dicts, not {type(values).__name__}")


def concat(parts, counts):
    """One batch's values from the values of consecutive batches (`counts` records each): what
    the C++ reader stacks stays stacked where all parts agree (type and shape of one record);
    anything else becomes a list of the records' values, with None for a feature a record has
    not."""
    if len(parts) == 1:
        return parts[0]
    first = parts[0]
    if all(isinstance(p, tuple) and len(p) == len(first) for p in parts) and isinstance(first, tuple):
        return tuple(concat([p[i] for p in parts], counts) for i in range(len(first)))
    if all(isinstance(p, dict) for p in parts):
        names = dict.fromkeys(name for p in parts for name in p)
        return {name: concat([p.get(name, [None] * n) for p, n in zip(parts, counts)], counts) for name in names}
    if all(isinstance(p, np.ndarray) for p in parts) and len({(p.dtype, p.shape[1:]) for p in parts}) == 1:
        return np.concatenate(parts)
    return [value for p in parts for value in (list(p) if isinstance(p, np.ndarray) else p)]
