"""Lookup by key through a shard index: random_access("index:PATH_OR_URL") opens a shard only
when a lookup needs it, the shard whose key range holds the key when the index gives ranges
(tablio's indexes of sorted shards), and positions (the i-th record of the table) open only
the shard that holds them."""

import bisect
import collections
import itertools

import tablio
from . import _tablio, shard_index

# Shards kept open at once: each holds its keys and their locations (and, remote, a
# connection), so that a lookup into a recent shard reads no headers again.
OPEN_SHARDS = 32


class IndexedTable:
    """A random-access reader over the shards a shard index lists (what random_access() gives
    for "index:..."): r[key], key in r, r.get(key), r.lookup(keys), len(r) (from the index),
    r.keys() (which opens every shard), and r.at(i), the i-th record's (key, value) in index
    order.

    A key is looked up in the shards whose [first_key, last_key] holds it, among those the
    index marks sorted, then in every shard whose keys the index does not bound (a wids
    index's), in index order, until one has it. Where keys are record numbers (TFRecord,
    IDX), counted across the shards as the table read whole counts them, a key names its
    record's shard. A shard is checked against the index's size when it is opened, and
    against its number of records when its keys are listed."""

    def __init__(self, index, open_shard, options=None):
        self.index = index
        self._source = shard_index.shown(index.source)  # as messages name it
        self._open_shard = open_shard
        self._specs = index.rspecs(options)
        self._numbered = bool(self._specs) and _tablio.ordinal_keys(self._specs[0])
        self._open = collections.OrderedDict()  # shard -> reader, least recently used first
        self._keys = {}  # shard -> its keys as the shard alone gives them, once listed
        ranged = sorted((s.first_key, s.last_key, i) for i, s in enumerate(index.shards) if s.sorted and s.samples)
        self._firsts = [first for first, _, _ in ranged]
        self._ranged = ranged
        self._disjoint = all(a[1] < b[0] for a, b in zip(ranged, ranged[1:]))
        self._unbounded = [i for i, s in enumerate(index.shards) if s.samples and not s.sorted]
        self._ends = list(itertools.accumulate(s.samples for s in index.shards))  # for locate()

    # -- shards --

    def _reader(self, shard):
        reader = self._open.pop(shard, None)
        if reader is None:
            shard_index.check_size(self.index.shards[shard], self.index.source, self.index.access)
            reader = self._open_shard(self._specs[shard])
            if len(self._open) >= OPEN_SHARDS:
                self._open.popitem(last=False)[1].close()
        self._open[shard] = reader
        return reader

    def _shard_keys(self, shard):
        keys = self._keys.get(shard)
        if keys is None:
            keys = self._reader(shard).keys()
            expected = self.index.shards[shard].samples
            if len(keys) != expected:
                name = shard_index.shown(self.index.shards[shard].url)
                raise tablio.FormatError(f"{name} has {len(keys)} records, and its shard index {self._source} "
                                         f"says {expected}: the shards changed since they were indexed", name)
            self._keys[shard] = keys
        return keys

    def _places(self, key):
        """[(shard, the key there)] that may hold key, in the order they are asked."""
        if self._numbered:
            n = int(key) if key.isascii() and key.isdigit() else len(self)
            if n >= len(self) or key != _tablio.ordinal_key(n):
                return []
            shard, at = self.locate(n)
            return [(shard, self._shard_keys(shard)[at])]
        if self._disjoint:
            j = bisect.bisect_right(self._firsts, key) - 1
            ranged = [self._ranged[j][2]] if j >= 0 and key <= self._ranged[j][1] else []
        else:
            ranged = [i for first, last, i in self._ranged if first <= key <= last]
        return [(shard, key) for shard in ranged + self._unbounded]

    def _absent(self, key):
        return KeyError(f"no entry '{key}' in the shards of {self._source}")

    # -- by key --

    def get(self, key, default=None):
        if not isinstance(key, str):
            return default
        for shard, there in self._places(key):
            value = self._reader(shard).get(there)
            if value is not None:
                return value
        return default

    def __getitem__(self, key):
        value = self.get(key)
        if value is None:
            raise self._absent(key)
        return value

    def _holder(self, key):
        """(shard, the key there) that has key, or None."""
        return next(((shard, there) for shard, there in self._places(key) if there in self._reader(shard)), None)

    def __contains__(self, key):
        return isinstance(key, str) and self._holder(key) is not None

    def _values(self, places):
        """The values at [(shard, key there)]: those of one shard are read in one call."""
        by_shard = collections.defaultdict(list)  # shard -> [(n, key there)]
        for n, (shard, there) in enumerate(places):
            by_shard[shard].append((n, there))
        values = [None] * len(places)
        for shard, wanted in by_shard.items():
            for (n, _), value in zip(wanted, self._reader(shard).lookup([there for _, there in wanted])):
                values[n] = value
        return values

    def lookup(self, keys):
        """The values of many keys: those of one shard are read in one call."""
        places = []
        for key in keys:
            found = self._places(key)
            # One candidate is asked in the batch, which names a key it lacks.
            found = found[0] if len(found) == 1 else self._holder(key)
            if found is None:
                raise self._absent(key)
            places.append(found)
        return self._values(places)

    # -- by position --

    def locate(self, position):
        """(shard, position in it) of the table's position-th record, in index order."""
        if not 0 <= position < len(self):
            raise IndexError(f"record {position} of a table of {len(self)} ({self._source})")
        shard = bisect.bisect_right(self._ends, position)
        return shard, position - (self._ends[shard - 1] if shard else 0)

    def _place(self, position):
        shard, at = self.locate(position)
        return shard, self._shard_keys(shard)[at]

    def key_at(self, position):
        """The position-th record's key, opening only its shard."""
        there = self._place(position)[1]
        return _tablio.ordinal_key(position) if self._numbered else there

    def at(self, position):
        """(key, value) of the position-th record, opening only its shard."""
        return self.key_at(position), self._values([self._place(position)])[0]

    def values_at(self, positions):
        """The values of many positions: those of one shard are read in one call."""
        return self._values([self._place(position) for position in positions])

    # -- whole --

    def __len__(self):
        return self._ends[-1] if self._ends else 0

    def keys(self):
        """Every key, in index order: opens every shard."""
        for shard in range(len(self.index.shards)):
            self._shard_keys(shard)
        if self._numbered:
            return [_tablio.ordinal_key(position) for position in range(len(self))]
        return [key for shard in range(len(self.index.shards)) for key in self._shard_keys(shard)]

    def __iter__(self):
        return iter(self.keys())

    def close(self):
        while self._open:
            self._open.popitem()[1].close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
