"""The epoch's plan (tablio._plan), a pure function, and its execution (tablio._execute) over
real tables, without torch and without processes: which records each rank and worker reads,
in which order, batched how."""

import collections
import itertools

import numpy as np
import pytest

import tablio
from tablio import _execute, _plan

SIZES = {"one table": [103], "two": [4, 3], "sixteen": [3 + s % 4 for s in range(16)], "empty ones": [0, 5, 0, 2]}


def job(sizes, options, epoch, world, workers):
    """{rank: [(worker, plan)]} for a whole job."""
    return {rank: [(worker, _plan.worker_plan(sizes, options, epoch, rank, world, worker, workers))
                   for worker in range(workers)] for rank in range(world)}


def stream_positions(sizes, options, epoch, plan):
    """The epoch-stream positions a worker's plan reads, in the order it hands them out."""
    order = _plan.table_order(len(sizes), options, epoch)
    offsets = dict(zip(order, itertools.accumulate([0] + [sizes[t] for t in order])))
    read = [offsets[p.table] + p.first + i for p in plan.pieces for i in range(p.count)]
    assert len(read) == plan.records
    return [read[i] for i in plan.order.tolist()]


@pytest.mark.parametrize("sizes", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("uneven", _plan.UNEVEN)
@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("unit", [1, 4])
def test_every_record_once_per_epoch_over_ranks_and_workers(sizes, uneven, shuffle, unit):
    total = sum(sizes)
    options = _plan.Options(shuffle=shuffle, seed=3, shuffle_buffer=8, uneven=uneven, unit=unit)
    for world, workers, epoch in itertools.product((1, 2, 3, 4), (1, 2, 3), (0, 1)):
        per_rank = {rank: [pos for _, plan in plans for pos in stream_positions(sizes, options, epoch, plan)]
                    for rank, plans in job(sizes, options, epoch, world, workers).items()}
        counts = collections.Counter(pos % total for positions in per_rank.values() for pos in positions)
        lengths = {len(positions) for positions in per_rank.values()}
        if uneven == "drop":
            assert lengths == {total // world} and set(counts.values()) <= {1} and total - len(counts) < world
        elif uneven == "pad":
            assert lengths == {-(-total // world)} and len(counts) == total
            assert sum(counts.values()) - total < world and max(counts.values()) <= 2
        else:
            assert len(counts) == total and set(counts.values()) == {1} and max(lengths) - min(lengths) <= 1
        for rank in range(world):
            assert len(per_rank[rank]) == _plan.items_per_rank(sizes, options, rank, world, None)


@pytest.mark.parametrize("uneven", ["drop", "pad"])
def test_batches_fill_across_tables_and_every_rank_yields_as_many(uneven):
    sizes = [100] * 16
    for world, workers, batch in itertools.product((1, 2, 3), (1, 2, 3), (1, 7, 64)):
        options = _plan.Options(uneven=uneven, unit=batch, shuffle=True, shuffle_buffer=50)
        batches = []
        for rank, plans in job(sizes, options, 0, world, workers).items():
            sizes_of_batches = [min(batch, plan.records - b * batch)
                                for _, plan in plans for b in range(plan.items(batch))]
            # Only the rank's last batch may be short: workers' parts are whole batches.
            assert all(n == batch for n in sizes_of_batches[:-1])
            assert sum(plan.items(batch) for _, plan in plans) == _plan.items_per_rank(sizes, options, rank, world,
                                                                                         batch)
            batches.append(len(sizes_of_batches))
        assert len(set(batches)) == 1  # DDP's ranks stay in step
    dropped = _plan.Options(unit=64, drop_last=True)
    assert _plan.items_per_rank(sizes, dropped, 0, 3, 64) == (1600 // 3) // 64
    assert all(plan.records % 64 == 0 for _, plan in job(sizes, dropped, 0, 3, 2)[1])


def test_orders_change_with_the_epoch_and_repeat_with_the_seed():
    sizes = [50, 50, 3]
    options = _plan.Options(shuffle=True, seed=7, shuffle_buffer=16)
    first = _plan.worker_plan(sizes, options, 0, 0, 1, 0, 1)
    again = _plan.worker_plan(sizes, options, 0, 0, 1, 0, 1)
    second = _plan.worker_plan(sizes, options, 1, 0, 1, 0, 1)
    assert first.pieces == again.pieces and (first.order == again.order).all()
    assert first.pieces != second.pieces or (first.order != second.order).any()
    other_seed = _plan.worker_plan(sizes, options._replace(seed=8), 0, 0, 1, 0, 1)
    assert (other_seed.order != first.order).any()
    plain = _plan.worker_plan(sizes, _plan.Options(), 0, 0, 1, 0, 1)
    assert plain.order.tolist() == list(range(103)) and [p.table for p in plain.pieces] == [0, 1, 2]


def brute_force_buffer(n, size, rng):
    if n <= size:
        return rng.permutation(n).tolist()
    picks = rng.integers(0, size, n - size)
    buffer, out = list(range(size)), []
    for i, slot in zip(range(size, n), picks.tolist()):
        out.append(buffer[slot])
        buffer[slot] = i
    return out + [buffer[k] for k in rng.permutation(size).tolist()]


@pytest.mark.parametrize("n,size", [(0, 4), (3, 4), (4, 4), (5, 4), (100, 7), (1000, 16), (10, 1)])
def test_the_shuffle_buffer_order_is_a_buffer_s(n, size):
    # What a buffer of `size` records hands out, simulated record by record.
    for seed in range(3):
        order = _plan.buffered_order(n, size, np.random.Generator(np.random.PCG64(seed)))
        assert order.tolist() == brute_force_buffer(n, size, np.random.Generator(np.random.PCG64(seed)))


# ---- execution over real tables

@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    """Three TFRecord shards of Examples with an image of 2x3 bytes and a label, and an LMDB."""
    folder = tmp_path_factory.mktemp("shards")
    names, key = [], 0
    for s, count in enumerate((5, 7, 4)):
        name = f"tfrecord,key=id:{folder}/s-{s:05d}-of-00003"
        with tablio.writer(name, type="example") as w:
            for _ in range(count):
                w[f"r{key:03d}"] = {"image": np.full(6, key, np.uint8).tobytes(), "label": np.array([key])}
                key += 1
        names.append(name)
    return names, [5, 7, 4]


def opener(names):
    return lambda table: tablio.open(names[table], type="example",
                                     decode_raw={"image": (np.uint8, (2, 3))}, features=["image", "label"])


@pytest.mark.parametrize("shuffle", [False, True])
@pytest.mark.parametrize("batch", [1, 3, 5, 16])
def test_batches_are_the_records_stacked_in_order(shards, shuffle, batch):
    names, sizes = shards
    options = _plan.Options(shuffle=shuffle, shuffle_buffer=4, unit=batch)
    plan = _plan.worker_plan(sizes, options, 0, 0, 1, 0, 1)
    one_by_one = list(_execute.records(opener(names), names, plan))
    assert len(one_by_one) == 16 and len({k for k, _ in one_by_one}) == 16
    if not shuffle:
        assert [k for k, _ in one_by_one] == [f"r{i:03d}" for i in range(16)]
    batched = list(_execute.batches(opener(names), names, plan, batch))
    assert [len(keys) for keys, _ in batched] == [min(batch, 16 - i) for i in range(0, 16, batch)]
    keys = [k for ks, _ in batched for k in ks]
    assert keys == [k for k, _ in one_by_one]
    for ks, values in batched:  # stacked across the shards a batch spans
        assert values["image"].shape == (len(ks), 1, 2, 3) and values["label"].shape == (len(ks), 1)
        assert [int(v) for v in values["label"][:, 0]] == [int(k[1:]) for k in ks]
        assert [int(v) for v in values["image"][:, 0, 0, 0]] == [int(k[1:]) for k in ks]


@pytest.mark.parametrize("shuffle", [False, True])
def test_starting_later_hands_out_exactly_what_would_have_followed(shards, shuffle):
    names, sizes = shards
    options = _plan.Options(shuffle=shuffle, shuffle_buffer=4, unit=3)
    plan = _plan.worker_plan(sizes, options, 2, 0, 1, 0, 1)
    whole = [k for k, _ in _execute.records(opener(names), names, plan)]
    for start in range(len(whole) + 1):
        assert [k for k, _ in _execute.records(opener(names), names, plan, start)] == whole[start:]
    batches = [ks for ks, _ in _execute.batches(opener(names), names, plan, 3)]
    for start in range(len(batches) + 1):
        assert [ks for ks, _ in _execute.batches(opener(names), names, plan, 3, start)] == batches[start:]


def test_a_long_shuffle_keeps_a_bounded_pool(tmp_path):
    # Records that linger in the buffer do not keep every chunk they came in alive.
    with tablio.writer(f"tfrecord:{tmp_path}/t", type="example") as w:
        for i in range(20000):
            w.append({"x": np.array([i])})
    plan = _plan.worker_plan([20000], _plan.Options(shuffle=True, shuffle_buffer=256, unit=8), 0, 0, 1, 0, 1)
    pool_sizes = []
    original = _execute._Pool.take

    def take(pool, picked):
        out = original(pool, picked)
        pool_sizes.append(sum(len(c.indexes) for c in pool._chunks))
        return out

    _execute._Pool.take = take
    try:
        got = [int(v) for _, values in _execute.batches(lambda t: tablio.open(f"tfrecord:{tmp_path}/t", type="example"),
                                                       ["t"], plan, 8) for v in values["x"][:, 0]]
    finally:
        _execute._Pool.take = original
    assert sorted(got) == list(range(20000))
    assert max(pool_sizes) <= 4 * 1024 + 256 + 8


def test_concat_stacks_what_agrees_and_lists_the_rest():
    a = {"x": np.zeros((2, 3)), "y": [b"a", b"b"]}
    b = {"x": np.ones((1, 3)), "z": np.ones((1, 2))}
    joined = _execute.concat([a, b], [2, 1])
    assert joined["x"].shape == (3, 3)
    assert joined["y"] == [b"a", b"b", None] and joined["z"][:2] == [None, None]
    mixed = _execute.concat([np.zeros((2, 3)), np.zeros((1, 4))], [2, 1])
    assert isinstance(mixed, list) and [m.shape for m in mixed] == [(3,), (3,), (4,)]
    pairs = _execute.concat([(np.zeros((2, 1, 2, 2)), np.array([1, 2])), (np.zeros((1, 1, 2, 2)), np.array([3]))],
                            [2, 1])
    assert pairs[0].shape == (3, 1, 2, 2) and pairs[1].tolist() == [1, 2, 3]
