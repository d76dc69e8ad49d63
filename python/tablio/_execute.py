"""Carrying out a worker's plan (tablio._plan): reading its pieces of tables in order and
handing their records out in the plan's order, one by one or in batches stacked as the C++
reader stacks them. No torch: the datasets turn what this yields into tensors.

`start` skips the first records (or batches) of the plan's order without handing them out:
records that are not handed out later are skipped unread, and the others are read again in
the order the plan reads them, so that what follows is exactly what would have followed.

`on_error`, when given, is called with each FormatError of a record that cannot be read or
decoded and the number of records it leaves out (more than one when the rest of a table
cannot be reached past it), which are then left out in its place (None in records(), a batch short of it in
batches()): it still counts as read, so that the plan's places, and so resuming, stay as they
were. The table is opened again past it, since a reader that failed reads no further.
"""

import numpy as np

import tablio
from tablio import shard_index


class _Pieces:
    """Reads a plan's pieces of tables in order: records one by one, or chunks of them."""

    def __init__(self, open_table, names, pieces, sizes=None, on_error=None):
        self._open, self._names, self._pieces, self._sizes = open_table, names, list(pieces), sizes
        self._on_error = on_error
        self._reader, self._left, self._next_piece = None, 0, 0
        self._to_end = False  # whether the current piece ends its table
        self._end = 0  # the table's index of the current piece's end

    def _current(self):
        """The reader of the piece that has records left, opened and moved to them."""
        while self._left == 0:
            self.close()
            if self._next_piece == len(self._pieces):
                raise tablio.UsageError("a plan's pieces ran out before its records")  # a bug if ever
            piece = self._pieces[self._next_piece]
            self._next_piece += 1
            self._left, self._table, self._end = piece.count, piece.table, piece.first + piece.count
            self._to_end = self._sizes is not None and self._end == self._sizes[piece.table]
            try:
                self._reader = self._open(piece.table)  # a shard that fails its index's check, too
                if self._reader.skip(piece.first) != piece.first:
                    self._fewer_records()
            except tablio.FormatError as e:
                self._unreachable(e, piece.count)
        return self._reader

    def _position(self):
        """The table's index of the next record of the current piece."""
        return self._end - self._left

    def _failed(self, error, at):
        """Record `at` of the current table failed with `error`: raised without on_error;
        else reported, and the table opened again past it (or, if that fails too, the rest of
        the piece reported as failed and left out). Returns how many records it leaves out."""
        if self._on_error is None or not isinstance(error, tablio.FormatError):
            raise error
        self._on_error(error, 1)
        self.close()
        try:
            self._reader = self._open(self._table)
            if self._reader.skip(at + 1) == at + 1:
                return 1
            self._fewer_records()
        except tablio.FormatError as again:
            if self._end - at > 1:
                self._unreachable(again, self._end - at - 1)
            self.close()
            self._reader = _Exhausted()
            return self._end - at

    def _unreachable(self, error, count):
        """Reports that `count` records of the current piece cannot be reached (`error`), and
        leaves them out."""
        if self._on_error is None:
            raise error
        self._on_error(tablio.FormatError(f"{shard_index.shown(self._names[self._table])}: {count} records cannot be "
                                          f"reached, left out: {error}", getattr(error, "path", None)), count)
        self.close()
        self._reader = _Exhausted()

    def _consumed(self, n):
        self._left -= n
        # A piece that ends its table: the table must end there too, or records it gained
        # since it was counted (or that its index leaves out) would be lost without a word.
        if self._left == 0 and self._to_end and not isinstance(self._reader, _Exhausted) and self._more():
            name = shard_index.shown(self._names[self._table])
            raise tablio.FormatError(f"{name} has more than the {self._sizes[self._table]} records it had when it "
                                     "was counted (or that its shard index says)", name.split(":", 1)[-1])

    def _more(self):
        """Whether the current table goes on past the records counted. Under on_error, damage
        there ends it: counting stopped at it too, and said so."""
        try:
            return self._reader.skip(1) != 0
        except tablio.FormatError:
            if self._on_error is None:
                raise
            return False

    def read(self, n):
        """Up to n records of the current piece (at least one, or, under on_error, one left
        out): (keys, values, kept, count), count the records read, kept the offsets among them
        of those handed out, or None for all; values None when none is."""
        reader = self._current()
        at, n = self._position(), min(n, self._left)
        if isinstance(reader, _Exhausted):  # the rest of the piece, left out
            count = self._left
            self._consumed(count)
            return [], None, [], count
        try:
            keys, values = reader._batch(n)
        except tablio.FormatError as e:
            if self._on_error is None:
                raise
            return self._read_each(at, n)
        if not keys:
            self._fewer_records()
        self._consumed(len(keys))
        return keys, values, None, len(keys)

    def _read_each(self, at, n):
        """Reads n records from `at` one by one, leaving out those that fail."""
        self.close()
        self._reader = self._open(self._table)
        try:
            if self._reader.skip(at) != at:
                self._fewer_records()
        except tablio.FormatError as e:
            count = self._left
            self._unreachable(e, count)
            self._consumed(count)
            return [], None, [], count
        keys, parts, kept = [], [], []
        offset = 0
        while offset < n:
            try:
                got_keys, got = self._reader._batch(1)
            except tablio.FormatError as e:
                gone = self._failed(e, at + offset)  # the rest of the piece, when it cannot be reached
                self._consumed(gone)
                offset += gone
                continue
            if not got_keys:
                self._fewer_records()
            keys += got_keys
            parts.append(got)
            kept.append(offset)
            self._consumed(1)
            offset += 1
        return keys, concat(parts, [1] * len(parts)) if parts else None, kept, offset

    def next(self):
        """The next record, as a list of one (key, value); under on_error, None for one that
        failed, and as many as it leaves out."""
        reader = self._current()
        at = self._position()
        if isinstance(reader, _Exhausted):  # the rest of the piece, left out
            count = self._left
            self._consumed(count)
            return [None] * count
        try:
            entry = next(reader, None)
        except tablio.FormatError as e:
            gone = self._failed(e, at)
            self._consumed(gone)
            return [None] * gone
        if entry is None:
            self._fewer_records()
        self._consumed(1)
        return [entry]

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


class _Exhausted:
    """What stands for a table whose rest cannot be reached, its records all left out."""

    def skip(self, n):
        return n

    def close(self):
        pass


class _Reading:
    """Where reading a plan's records stands: the next record's index in the plan's reading,
    and which records are wanted (those it hands out from `start` on), the others (handed out
    before, or consumed by an earlier run of a resumed epoch) being skipped unread."""

    def __init__(self, source, plan, start):
        self.source, self.next = source, 0
        self.wanted = self.unwanted = None
        span = plan.records if plan.span is None else plan.span
        if start or span != plan.records:
            self.wanted = np.zeros(span, bool)
            self.wanted[plan.order[start:]] = True

    def through(self, last, take):
        """Reads on past record `last`: take(first, most) reads wanted records from `first`,
        at most `most` (those wanted in a row from there), and returns how many it read."""
        while self.next <= last:
            if self.wanted is None:
                self.next += take(self.next, None)
            elif self.wanted[self.next]:
                if self.unwanted is None:  # once: where the records not to read again are
                    self.unwanted = np.flatnonzero(~self.wanted)
                at = int(np.searchsorted(self.unwanted, self.next))
                end = int(self.unwanted[at]) if at < len(self.unwanted) else len(self.wanted)
                self.next += take(self.next, end - self.next)
            else:
                rest = self.wanted[self.next:last + 1]
                found = np.flatnonzero(rest)
                run = int(found[0]) if len(found) else len(rest)
                self.source.skip(run)
                self.next += run


def records(open_table, names, plan, start=0, sizes=None, on_error=None, left_out=None):
    """Yields (key, value) for the plan's records from its start-th, in its order; a table
    that has more records than `sizes` says is an error. Under on_error, a record left out
    yields the next record of the worker's part that is not (around to the part's first), as
    uneven="pad" repeats records: every place of the plan yields one item, and the same one
    whether or not the epoch was resumed. left_out(n), when given, is called before each item
    with the number of records left out that it stands for."""
    source = _Pieces(open_table, names, plan.pieces, sizes, on_error)
    reading = _Reading(source, plan, start)
    held = {}  # records read and not yet handed out, by index (None: left out)

    def take(at, most):
        entries = source.next()
        for i, entry in enumerate(entries):
            held[at + i] = entry
        return len(entries)

    owed = 0  # places of records left out, waiting for the next record to stand in
    try:
        for i in plan.order[start:].tolist():
            reading.through(i, take)
            entry = held.pop(i)
            if entry is None:
                owed += 1
                continue
            for n in range(owed + 1):  # the places of those left out, then its own
                if left_out:
                    left_out(owed if n == 0 else 0)
                yield entry
            owed = 0
    finally:
        source.close()
    if owed:
        first = next((e for e in records(open_table, names, plan, 0, sizes, lambda error, n: None) if e is not None),
                     None)
        if first is None:
            raise tablio.FormatError(f"every record of this worker's part of the epoch failed ({len(plan.order)}): "
                                     "none is left to stand in for them")
        for n in range(owed):
            if left_out:
                left_out(owed if n == 0 else 0)
            yield first


def batches(open_table, names, plan, batch_size, start=0, sizes=None, on_error=None, left_out=None, decode=None):
    """Yields (keys, values) for the plan's records in batches of batch_size (the last may be
    shorter), from its start-th batch, in its order; values stacked as the C++ reader stacks
    them, across the pieces a batch spans. Under on_error, a batch is short of the records left
    out (and may be empty); left_out(n), when given, is called before each batch with their
    number. decode(keys, values), when given, makes a batch's values of what the tables read
    (records held undecoded until picked), leaving out (under on_error) those that fail."""
    source = _Pieces(open_table, names, plan.pieces, sizes, on_error)
    reading = _Reading(source, plan, start * batch_size)
    pool = _Pool()
    try:
        order = plan.order
        for first in range(start * batch_size, len(order), batch_size):
            picked = order[first:first + batch_size]
            last = int(picked.max())
            # A batch of consecutive records (an unshuffled plan) is read up to its end and no
            # further, so that the next batch starts a read of its own: a read's values then are
            # the batch's, stacked once (a sample batch's images are rows of one array).
            in_turn = last - int(picked[0]) == len(picked) - 1

            def take(at, most):  # a whole batch's worth at least, but no record already handed out
                want = last + 1 - at if in_turn else max(last + 1 - at, batch_size)
                keys, values, kept, count = source.read(want if most is None else min(want, most))
                if keys:
                    pool.add(at + (np.arange(len(keys)) if kept is None else np.asarray(kept, np.int64)), keys, values)
                return count

            reading.through(last, take)
            keys, values = pool.take(picked)
            if decode and keys:
                keys, values = decode(keys, values)
            if left_out:
                left_out(len(picked) - len(keys))
            yield keys, values
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

    def add(self, indexes, keys, values):
        """Records read: their indexes in the plan's reading (ascending), keys and values."""
        self._chunks.append(_Chunk(indexes, keys, values))

    def take(self, picked):
        """(keys, values) of the records `picked` that it holds, in that order: ([], []) for
        none (all were left out)."""
        found = []  # (chunk, positions in picked, rows in the chunk)
        for chunk in self._chunks:
            at = np.searchsorted(chunk.indexes, picked)
            hit = np.flatnonzero(chunk.indexes[np.minimum(at, len(chunk.indexes) - 1)] == picked)
            if len(hit):
                found.append((chunk, hit, at[hit]))
        if not found:
            return [], []
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
