"""Exact mid-epoch resume: tablio.torch.DataLoader's state_dict/load_state_dict over
TableIterableDataset and over TableDataset with tablio.torch.DistributedSampler, with the same
configuration (the rest of the epoch is the uninterrupted run's rest, item for item) and with
another (elastic: every record not yet consumed, exactly once across the new ranks).
Processes killed mid-epoch are in test_resume_killed.py."""

import json
import multiprocessing

import pytest

import tablio

torch = pytest.importorskip("torch")
from tablio.torch import DataLoader, DistributedSampler, TableDataset, TableIterableDataset, collate  # noqa: E402

N = 103


@pytest.fixture(scope="module")
def shards(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resume")
    with tablio.writer(f"tar,maxcount=9:{folder}/s-%04d.tar", type="sample") as w:
        for i in range(N):
            w[f"{i:05d}"] = {"cls": i, "txt": f"record {i}"}
    return f"tar:{folder}/s-%04d.tar"


def keys_of(item):
    """The keys in one item the loader yielded: (key, value) or (keys, values)."""
    keys = item[0]
    return [keys] if isinstance(keys, str) else list(keys)


def make(shards, rank, world, workers, context, batched, shuffle, loader_batch=None, uneven="allow"):
    dataset = TableIterableDataset(shards, type="sample", with_keys=True, shuffle=shuffle, shuffle_buffer=16,
                                   seed=5, batch_size=4 if batched else None, rank=rank, world_size=world,
                                   uneven=uneven)
    dataset.set_epoch(1)
    kwargs = {"num_workers": workers, "collate_fn": collate}
    if workers:
        kwargs.update(multiprocessing_context=context, timeout=120)  # a stuck worker fails the test
    return DataLoader(dataset, batch_size=None if batched else loader_batch, **kwargs)


def run(loader, stop=None):
    """The keys of each item, up to `stop` items; and the state after them."""
    items = []
    for item in loader:
        items.append(keys_of(item))
        if stop is not None and len(items) == stop:
            break
    return items, json.loads(json.dumps(loader.state_dict()))


CASES = [  # workers, start method, dataset batches, shuffle, DataLoader batch
    (0, None, False, False, None),
    (2, "fork", False, True, None),
    (2, "spawn", True, True, None),
    (3, "forkserver", True, False, None),
    (2, "fork", False, True, 5),
]


@pytest.mark.parametrize("workers,context,batched,shuffle,loader_batch", CASES)
def test_resuming_with_the_same_configuration_yields_the_uninterrupted_rest(shards, workers, context, batched,
                                                                            shuffle, loader_batch):
    whole, end = run(make(shards, 0, 1, workers, context, batched, shuffle, loader_batch))
    assert sorted(k for item in whole for k in item) == [f"{i:05d}" for i in range(N)]
    assert end["yielded"] == len(whole)
    for stop in (1, len(whole) // 3, len(whole) - 1):
        first, state = run(make(shards, 0, 1, workers, context, batched, shuffle, loader_batch), stop)
        assert state["epoch"] == 1 and state["yielded"] == stop
        resumed = make(shards, 0, 1, workers, context, batched, shuffle, loader_batch)
        resumed.dataset.set_epoch(0)
        resumed.load_state_dict(state)  # sets the epoch back to the state's
        rest, after = run(resumed)
        assert first + rest == whole
        assert after["yielded"] == len(whole)
        again, _ = run(resumed)  # the next iteration is a whole epoch again
        assert again == whole


def test_states_are_the_same_on_every_rank_and_resume_elastically(shards):
    # 2 ranks x 2 workers stop after 7 items each; the job goes on as 3 ranks x 1 worker.
    states, consumed = [], []
    for rank in range(2):
        items, state = run(make(shards, rank, 2, 2, "fork", False, True), 7)
        states.append(state)
        consumed += [k for item in items for k in item]
    assert states[0] == states[1]
    delivered = []
    for rank in range(3):
        loader = make(shards, rank, 3, 0, None, False, True)
        loader.load_state_dict(states[0])
        assert len(loader) == (N - 14) * (rank + 1) // 3 - (N - 14) * rank // 3
        items, state = run(loader)
        delivered += [k for item in items for k in item]
        assert state["previous"] == states[0]
    assert len(delivered) == N - 14
    assert sorted(consumed + delivered) == [f"{i:05d}" for i in range(N)]  # exactly once


@pytest.mark.parametrize("workers,context", [(0, None), (2, "spawn")])
def test_lengths_after_an_elastic_resume_are_whole_epochs_again(shards, workers, context):
    # Stopped at 2 ranks, resumed at 3: the resumed epoch is its remainder, every later one whole.
    _, state = run(make(shards, 0, 2, 0, None, False, True), 20)
    loader = make(shards, 1, 3, workers, context, False, True)
    loader.load_state_dict(state)
    assert len(loader) == len(run(loader)[0]) < N // 3
    for epoch in (2, 3):
        loader.dataset.set_epoch(epoch)
        assert len(loader) == len(loader.dataset) == N * 2 // 3 - N // 3
        assert len(run(loader)[0]) == len(loader)
    dataset = TableDataset(shards, type="sample")
    sampler = DistributedSampler(dataset, num_replicas=2, rank=0, shuffle=True)
    mapped = DataLoader(dataset, sampler=sampler, batch_size=None)
    for i, _ in enumerate(mapped):
        if i == 19:
            break
    state = mapped.state_dict()
    sampler = DistributedSampler(dataset, num_replicas=3, rank=1, shuffle=True)
    mapped = DataLoader(dataset, sampler=sampler, batch_size=None)
    mapped.load_state_dict(state)
    assert len(mapped) == len(list(mapped)) < N // 3
    sampler.set_epoch(state["epoch"] + 1)
    assert len(mapped) == len(list(mapped)) == -(-N // 3)


def test_elastic_resumes_resume_again_and_keep_ranks_in_step(shards):
    states, consumed = [], []
    for rank in range(2):
        items, state = run(make(shards, rank, 2, 2, "fork", True, False, uneven="drop"), 3)
        consumed += [k for item in items for k in item]
        states.append(state)
    middle, lengths = [], []
    for rank in range(3):  # elastic, stopped again after 2 batches each
        loader = make(shards, rank, 3, 1, "fork", True, False, uneven="drop")
        loader.load_state_dict(states[0])
        lengths.append(len(loader.dataset))
        items, state = run(loader, 2)
        middle.append(state)
        consumed += [k for item in items for k in item]
    assert len(set(lengths)) == 1 and middle[0] == middle[1] == middle[2]
    rest, lengths = [], []
    for rank in range(2):  # and again, over 1 worker each
        loader = make(shards, rank, 2, 0, None, True, False, uneven="allow")
        loader.load_state_dict(middle[0])
        items, _ = run(loader)
        rest += [k for item in items for k in item]
    everything = consumed + rest
    assert len(everything) == len(set(everything)) == N


def test_a_state_of_other_tables_is_refused(shards, tmp_path):
    with tablio.writer(f"tar:{tmp_path}/other.tar", type="sample") as w:
        w["k"] = {"cls": 1}
    _, state = run(make(shards, 0, 1, 0, None, False, False), 3)
    other = DataLoader(TableIterableDataset(f"tar:{tmp_path}/other.tar", type="sample"), batch_size=None)
    with pytest.raises(tablio.UsageError, match="cannot resume: the state was saved over"):
        other.load_state_dict(state)
    for seed, shuffle in ((6, False), (5, True)):  # another order: the positions name other records
        dataset = TableIterableDataset(shards, type="sample", shuffle=shuffle, seed=seed)
        with pytest.raises(tablio.UsageError, match="cannot resume: the state's epoch was read with"):
            DataLoader(dataset, batch_size=None).load_state_dict(state)
    with pytest.raises(tablio.UsageError, match="resumes a TableIterableDataset"):
        DataLoader(TableDataset(f"tar:{tmp_path}/other.tar", type="sample"))


def as_list(batch):
    return batch


def sampled(shards, rank, world, workers, batch=4, shuffle=True):
    dataset = TableDataset(shards, type="sample")
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=shuffle, seed=3)
    sampler.set_epoch(2)
    kwargs = {"num_workers": workers, "multiprocessing_context": "spawn"} if workers else {}
    return DataLoader(dataset, batch_size=batch, sampler=sampler, collate_fn=as_list, **kwargs)


def labels(loader, stop=None):
    out = []
    for batch in loader:
        out.append([int(sample["cls"]) for sample in batch])
        if stop is not None and len(out) == stop:
            break
    return out, json.loads(json.dumps(loader.state_dict()))


@pytest.mark.worker_processes
def test_the_sampler_resumes_a_map_style_dataset(shards):
    whole, _ = labels(sampled(shards, 1, 2, 2))
    first, state = labels(sampled(shards, 1, 2, 2), 5)
    resumed = sampled(shards, 1, 2, 2)
    resumed.load_state_dict(state)
    rest, _ = labels(resumed)
    assert first + rest == whole
    # Elastic: 2 ranks stop after 5 batches, 3 ranks finish the epoch.
    consumed = []
    for rank in range(2):
        items, state = labels(sampled(shards, rank, 2, 0), 5)
        consumed += [i for b in items for i in b]
    delivered = []
    for rank in range(3):
        loader = sampled(shards, rank, 3, 0, batch=3)
        loader.load_state_dict(state)
        items, _ = labels(loader)
        delivered += [i for b in items for i in b]
    assert len(consumed) == 40 and len(delivered) == N - 40  # 63 over 3 ranks: none repeated to pad them
    assert set(consumed + delivered) == set(range(N)) and not set(consumed) & set(delivered)


@pytest.mark.parametrize("batched", [False, True])
def test_a_state_saved_with_threads_resumes_without_and_the_other_way(shards, batched):
    def loader(threads):
        dataset = TableIterableDataset(shards, type="sample", with_keys=True, shuffle=True, shuffle_buffer=16,
                                       seed=5, batch_size=4 if batched else None, threads=threads)
        dataset.set_epoch(1)
        return DataLoader(dataset, batch_size=None, collate_fn=collate)

    whole, _ = run(loader(None))
    assert run(loader(3))[0] == whole  # the same items, in the same order
    for saved, resumed in ((3, None), (None, 2), (2, 4)):
        first, state = run(loader(saved), len(whole) // 2)
        again = loader(resumed)
        again.load_state_dict(state)
        rest, _ = run(again)
        assert first + rest == whole
