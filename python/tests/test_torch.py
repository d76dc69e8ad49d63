"""tablio.torch: map-style and streaming datasets, split over DataLoader workers and
torch.distributed ranks (gloo on loopback; ranks started by torch.multiprocessing.spawn and by
torch.distributed.run, workers by fork, spawn and forkserver), each record exactly once per
epoch."""

import collections
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ddp_job  # noqa: E402
import tablio  # noqa: E402
import tablio.torch as tt  # noqa: E402

DEADLINE = 240  # seconds for one distributed run, processes included


def make_tables(folder):
    """An LMDB of 103 Datums, an scp of 50 matrices, TFRecord shards (2 and 16 of them)."""
    folder = str(folder)
    rng = np.random.default_rng(0)
    with tablio.writer(f"lmdb:{folder}/db", type="datum") as w:
        for i in range(103):
            w[f"d{i:05d}"] = (rng.integers(0, 255, (1, 4, 4), dtype=np.uint8), i % 10)
    with tablio.writer(f"ark,scp:{folder}/m.ark,{folder}/m.scp") as w:
        for i in range(50):
            w[f"m{i:05d}"] = np.full((2, 3), i, np.float32)
    for shards in (2, 16):
        key = 0
        for s in range(shards):
            with tablio.writer(f"tfrecord,key=id:{folder}/t{shards}-{s:05d}-of-{shards:05d}", type="example") as w:
                for _ in range(3 + s % 4):  # uneven shards
                    w[f"t{key:05d}"] = {"x": np.array([key])}
                    key += 1
    return {
        "lmdb": (f"lmdb:{folder}/db", "datum", 103),
        "scp": (f"scp:{folder}/m.scp", "matrix", 50),
        "tfrecord2": (f"tfrecord,key=id:{folder}/t2@2", "example", sum(3 + s % 4 for s in range(2))),
        "tfrecord16": (f"tfrecord,key=id:{folder}/t16-*-of-00016", "example",
                       sum(3 + s % 4 for s in range(16))),
    }


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    return make_tables(tmp_path_factory.mktemp("tables"))


# ---- one process

def test_map_style_dataset(tables):
    rspec, type_, n = tables["lmdb"]
    ds = tt.TableDataset(rspec, type=type_)
    assert len(ds) == n and ds.keys[0] == "d00000"
    image, label = ds[5]
    assert isinstance(image, torch.Tensor) and image.dtype == torch.uint8 and label == 5
    sampler = torch.utils.data.DistributedSampler(ds, num_replicas=2, rank=1, shuffle=True, seed=3)
    loader = torch.utils.data.DataLoader(ds, batch_size=8, sampler=sampler, num_workers=2)
    assert sum(len(labels) for _, labels in loader) == len(sampler)
    matrices = tt.TableDataset(*tables["scp"][:2])
    assert torch.equal(matrices[7], torch.full((2, 3), 7.0))
    # DataLoader's batches come through __getitems__: one lookup call per batch.
    picked = matrices.__getitems__([3, 1, 4])
    assert len(picked) == 3 and all(torch.equal(m, torch.full((2, 3), float(i))) for i, m in zip((3, 1, 4), picked))
    batches = list(torch.utils.data.DataLoader(matrices, batch_size=16))
    assert torch.equal(torch.cat(batches), torch.stack([matrices[i] for i in range(len(matrices))]))


def test_shard_patterns_expand_to_files(tables):
    assert len(tt.expand_shards(tables["tfrecord16"][0])) == 16
    two = tt.expand_shards(tables["tfrecord2"][0])
    assert len(two) == 2 and two[0].endswith("t2-00000-of-00002")


def fake_worker(monkeypatch, worker, workers):
    """Makes the dataset believe it runs in DataLoader worker `worker` of `workers` (0: none)."""
    info = type("info", (), {"id": worker, "num_workers": workers})() if workers else None
    monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda: info)


def read_as_job(monkeypatch, make, world, workers):
    """[keys of each rank], each rank's dataset made by make(rank, world) and read by each of
    its workers in turn, as DataLoader would."""
    per_rank = []
    for rank in range(world):
        ds, keys = make(rank, world), []
        for worker in range(max(workers, 1)):
            fake_worker(monkeypatch, worker, workers)
            keys += [k for k, _ in ds]
        fake_worker(monkeypatch, 0, 0)
        per_rank.append(keys)
    return per_rank


@pytest.mark.parametrize("name", ["lmdb", "tfrecord2", "tfrecord16"])
@pytest.mark.parametrize("uneven", ["drop", "pad", "allow"])
def test_every_record_once_over_ranks_and_workers(monkeypatch, tables, name, uneven):
    rspec, type_, n = tables[name]
    for world, workers in itertools.product((1, 2, 3, 4), (0, 1, 3)):
        per_rank = read_as_job(monkeypatch, lambda rank, world: tt.TableIterableDataset(
            rspec, type=type_, uneven=uneven, shuffle=True, seed=1, with_keys=True, rank=rank, world_size=world),
            world, workers)
        check_epoch(per_rank, n, world, uneven)


def check_epoch(per_rank, n, world, uneven):
    counts = collections.Counter(k for keys in per_rank for k in keys)
    sizes = {len(keys) for keys in per_rank}
    if uneven != "allow":
        assert len(sizes) == 1, sizes  # every rank takes the same number of steps
    if uneven == "drop":
        assert set(counts.values()) == {1} and n - len(counts) < world
    elif uneven == "pad":
        assert len(counts) == n and sum(counts.values()) - n < world and max(counts.values()) <= 2
    else:
        assert len(counts) == n and set(counts.values()) == {1}


def test_where_a_rank_runs_is_given_or_the_launchers(monkeypatch, tables):
    rspec, type_, n = tables["tfrecord16"]
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "3")
    from_launcher = tt.TableIterableDataset(rspec, type=type_, with_keys=True)
    given = tt.TableIterableDataset(rspec, type=type_, with_keys=True, rank=2, world_size=3)
    assert len(from_launcher) == len(given) == n // 3
    assert [k for k, _ in from_launcher] == [f"t{i:05d}" for i in range(n // 3, 2 * (n // 3))]
    assert [k for k, _ in given][0] == f"t{2 * (n // 3):05d}"
    with pytest.raises(tablio.UsageError, match="both"):
        tt.TableIterableDataset(rspec, type=type_, rank=1)
    with pytest.raises(tablio.UsageError, match="rank 3"):
        tt.TableIterableDataset(rspec, type=type_, rank=3, world_size=3)
    monkeypatch.delenv("RANK")
    assert len(tt.TableIterableDataset(rspec, type=type_)) == n  # no launcher: one process


def test_a_bad_number_of_threads_is_refused_when_the_dataset_is_made(tables):
    rspec, type_, _ = tables["tfrecord16"]
    for threads in (0, -1, "2", 2.0, True, 257):
        with pytest.raises(tablio.UsageError, match="threads is a number of threads, 1 to 256"):
            tt.TableIterableDataset(rspec, type=type_, threads=threads)
    assert len(tt.TableIterableDataset(rspec, type=type_, threads=2)) == len(tt.TableIterableDataset(rspec, type=type_))


def test_epochs_reshuffle_and_seeds_repeat(tables):
    rspec, type_, _ = tables["lmdb"]
    ds = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=7, shuffle_buffer=16, with_keys=True)
    first = [k for k, _ in ds]
    ds.set_epoch(1)
    second = [k for k, _ in ds]
    again = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=7, shuffle_buffer=16, with_keys=True)
    again.set_epoch(1)
    assert first != second and sorted(first) == sorted(second)
    assert [k for k, _ in again] == second


def test_batches_for_dataloader_without_batching(tables):
    rspec, type_, n = tables["lmdb"]
    ds = tt.TableIterableDataset(rspec, type=type_, batch_size=32)
    batches = list(torch.utils.data.DataLoader(ds, batch_size=None))
    assert [len(labels) for images, labels in batches] == [32, 32, 32, 7]
    assert batches[0][0].shape == (32, 1, 4, 4)
    assert len(ds) == 4  # batches, as DataLoader and LR schedulers count them
    assert len(torch.utils.data.DataLoader(ds, batch_size=None)) == 4
    dropped = tt.TableIterableDataset(rspec, type=type_, batch_size=32, drop_last=True)
    assert len(dropped) == 3 and [len(labels) for _, labels in dropped] == [32, 32, 32]


def test_batches_fill_across_shards_and_every_rank_yields_as_many(monkeypatch, tmp_path):
    # 16 shards of 100 records, 3 ranks, 2 workers each, batches of 64: batches do not stop at
    # shards' ends, and each rank yields the same number, only its last one short.
    for s in range(16):
        with tablio.writer(f"tfrecord:{tmp_path}/b-{s:05d}-of-00016", type="int32") as w:
            for i in range(100):
                w.append(s * 100 + i)
    for shuffle in (False, True):
        per_rank = []
        for rank in range(3):
            ds = tt.TableIterableDataset(f"tfrecord:{tmp_path}/b-*-of-00016", type="int32", batch_size=64,
                                         shuffle=shuffle, rank=rank, world_size=3)
            sizes = []
            values = []
            for worker in range(2):
                fake_worker(monkeypatch, worker, 2)
                for batch in ds:
                    sizes.append(len(batch))
                    values += batch.tolist()
            fake_worker(monkeypatch, 0, 0)
            assert sizes[:-1] == [64] * (len(sizes) - 1) and len(sizes) == len(ds) == 9, sizes
            per_rank.append(values)
        everything = [v for values in per_rank for v in values]
        assert len(everything) == len(set(everything)) == 3 * (1600 // 3)


def test_batched_records_are_shuffled_before_they_are_batched(tables):
    # One table (no shard order to shuffle): batches still hold shuffled records.
    rspec, type_, n = tables["lmdb"]
    ds = tt.TableIterableDataset(rspec, type=type_, batch_size=10, shuffle=True, shuffle_buffer=32,
                                 with_keys=True)
    keys = [k for batch_keys, _ in ds for k in batch_keys]
    assert sorted(keys) == [f"d{i:05d}" for i in range(n)] and keys != sorted(keys)
    images_and_labels = [(keys, batch) for keys, batch in ds]
    for batch_keys, (images, labels) in images_and_labels:
        assert labels.tolist() == [int(k[1:]) % 10 for k in batch_keys]
    ds.set_epoch(1)
    assert [k for batch_keys, _ in ds for k in batch_keys] != keys


def test_labels_have_one_dtype_batched_or_collated(tables):
    rspec, type_, n = tables["lmdb"]
    batched = next(iter(tt.TableIterableDataset(rspec, type=type_, batch_size=8)))
    collated = next(iter(torch.utils.data.DataLoader(tt.TableIterableDataset(rspec, type=type_), batch_size=8)))
    mapped = next(iter(torch.utils.data.DataLoader(tt.TableDataset(rspec, type=type_), batch_size=8)))
    for images, labels in (batched, collated, mapped):
        assert labels.dtype == torch.int64 and images.dtype == torch.uint8
    assert torch.equal(batched[1], collated[1]) and torch.equal(batched[0], collated[0])
    logits = torch.zeros(8, 10, requires_grad=True)
    torch.nn.functional.cross_entropy(logits, batched[1]).backward()  # needs int64 targets
    numbers = f"ark:{rspec.split(':')[1]}/../numbers.ark"
    with tablio.writer(numbers, type="int32") as w:
        for i in range(4):
            w[f"k{i}"] = i
    assert next(iter(tt.TableIterableDataset(numbers, type="int32", batch_size=4))).dtype == torch.int64
    assert next(iter(torch.utils.data.DataLoader(tt.TableIterableDataset(numbers, type="int32"),
                                                 batch_size=4))).dtype == torch.int64


def test_example_collate(tables):
    rspec, type_, n = tables["tfrecord16"]
    ds = tt.TableIterableDataset(rspec, type=type_)
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=5, collate_fn=tt.collate)))
    assert batch["x"].shape == (5, 1)
    # A feature the first sample lacks keeps the structure it has when all have it, zeros where
    # samples lack it, which __missing__ marks; with_keys=True samples give (keys, batch).
    samples = [{"a": torch.tensor([1])}, {"a": torch.tensor([2]), "b": torch.tensor([5])}]
    collated = tt.collate(samples)
    assert collated["a"].tolist() == [[1], [2]] and collated["b"].tolist() == [[0], [5]]
    assert collated["__missing__"]["b"].tolist() == [True, False] and "a" not in collated["__missing__"]
    keys, values = tt.collate([("k1", samples[0]), ("k2", samples[1])])
    assert keys == ["k1", "k2"] and values["a"].shape == (2, 1)
    with pytest.raises(tablio.UsageError, match="collate takes a batch's samples"):
        tt.collate(samples[0])  # one sample, as DataLoader(batch_size=None) hands it
    keyed = tt.TableIterableDataset(rspec, type=type_, with_keys=True)
    keys, values = next(iter(torch.utils.data.DataLoader(keyed, batch_size=4, collate_fn=tt.collate)))
    assert len(keys) == 4 and values["x"].shape == (4, 1)


def test_tensors_of_types_torch_lacks_are_widened(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/raw", type="example") as w:
        for i in range(3):
            w.append({"u16": np.array([i, 65535], "<u2").tobytes(), "u32": np.array([i, 2**32 - 1], "<u4").tobytes()})
    raw = {"u16": np.uint16, "u32": np.uint32}
    sample = tt.TableDataset(f"tfrecord:{tmp_path}/raw", type="example", decode_raw=raw)[0]
    assert sample["u16"].dtype == torch.int32 and sample["u16"].tolist() == [[0, 65535]]
    assert sample["u32"].dtype == torch.int64 and sample["u32"].tolist() == [[0, 2**32 - 1]]
    batch = next(iter(tt.TableIterableDataset(f"tfrecord:{tmp_path}/raw", type="example", decode_raw=raw,
                                              batch_size=3)))
    assert batch["u16"].dtype == torch.int32 and batch["u32"][2].tolist() == [[2, 2**32 - 1]]
    widened = tt.to_tensors({"a": np.array([1], np.uint16), "b": np.array([7], np.uint64)})
    assert widened["a"].dtype == torch.int32 and widened["b"].dtype == torch.int64
    with pytest.raises(tablio.UsageError, match="uint64"):
        tt.to_tensors(np.array([2**64 - 1], np.uint64))


def test_a_map_style_dataset_gives_a_batch_for_a_list_of_indices(tables):
    # DataLoader(ds, sampler=BatchSampler(...), batch_size=None) hands the dataset lists.
    rspec, type_, n = tables["lmdb"]
    ds = tt.TableDataset(rspec, type=type_)
    sampler = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(ds), batch_size=10, drop_last=False)
    batches = list(torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=None))
    assert len(batches) == 11 and batches[0][0].shape == (10, 1, 4, 4) and batches[-1][1].tolist() == [0, 1, 2]
    images, labels = ds[[4, 2]]
    assert labels.tolist() == [4, 2] and torch.equal(images[0], ds[4][0])


def test_a_table_with_a_repeated_key_makes_no_dataset(tmp_path):
    # Random access by key cannot tell the two entries apart: refused, rather than handing
    # out the first entry's value for the second's index.
    with tablio.writer(f"tar:{tmp_path}/dup.tar", type="int32") as w:
        w["a"], w["b"] = 1, 2
        w["a"] = 3
    with pytest.raises(tablio.FormatError, match="duplicate key 'a'"):
        tt.TableDataset(f"tar:{tmp_path}/dup.tar", type="int32")
    with tablio.writer(f"tfrecord,key=id:{tmp_path}/dup.tfrecord", type="example") as w:
        w["a"] = {"x": np.array([1])}
        w["a"] = {"x": np.array([2])}
    with pytest.raises(tablio.FormatError, match="duplicate key 'a'"):
        tt.TableDataset(f"tfrecord,key=id:{tmp_path}/dup.tfrecord", type="example")


def test_a_members_batch_has_one_structure_whatever_samples_lack(tmp_path):
    spec = f"tar:{tmp_path}/s.tar"
    with tablio.writer(spec, type="sample") as w:
        for i in range(8):
            member = {"cls": i, "json": {"n": i, "name": f"s{i}"}, "txt": f"t{i}"}
            if i == 5:
                del member["cls"], member["json"]
            w[f"{i:03d}"] = member
    whole, partial = [], []
    for batched in (True, False):
        ds = tt.TableIterableDataset(spec, type="sample", decode=True, batch_size=4 if batched else None)
        loader = (torch.utils.data.DataLoader(ds, batch_size=None) if batched else
                  torch.utils.data.DataLoader(ds, batch_size=4, collate_fn=tt.collate))
        first, second = list(loader)
        for batch, lacking in ((first, []), (second, [False, True, False, False])):
            assert batch["cls"].dtype == torch.int64 and batch["cls"].shape == (4,)
            assert isinstance(batch["json"], list) and isinstance(batch["txt"], list)
            assert [m.tolist() for m in batch["__missing__"].values()] == ([lacking] * 2 if lacking else [])
        assert second["cls"].tolist() == [4, 0, 6, 7] and second["json"][1] is None
        assert first["json"][2] == {"n": 2, "name": "s2"}


def test_read_only_arrays_of_a_decode_function_become_tensors_without_warnings(tmp_path):
    spec = f"tar:{tmp_path}/r.tar"
    with tablio.writer(spec, type="sample") as w:
        for i in range(4):
            w[f"{i:03d}"] = {"raw": bytes(range(i, i + 6))}
    decode = {"raw": lambda b: np.frombuffer(b, np.uint8)}  # read-only, as frombuffer gives them
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns of tensors over non-writable arrays
        for batch in (None, 2):
            for item in tt.TableIterableDataset(spec, type="sample", decode=decode, batch_size=batch):
                assert isinstance(item["raw"], torch.Tensor)
        mapped = tt.TableDataset(spec, type="sample", decode=decode)
        assert mapped[1]["raw"].tolist() == [1, 2, 3, 4, 5, 6]
        mapped[1]["raw"][0] = 9  # a tensor of its own
        assert mapped[1]["raw"][0] == 1


def test_collate_batches_as_the_cxx_reader_does(tmp_path):
    # Matrices of different shapes come as a list, as batches() gives them, not an error.
    with tablio.writer(f"ark,scp:{tmp_path}/m.ark,{tmp_path}/m.scp") as w:
        for i in range(3):
            w[f"u{i}"] = np.zeros((2 + i, 3), np.float32)
    ds = tt.TableDataset(f"scp:{tmp_path}/m.scp")
    batch = ds[[0, 1, 2]]
    assert isinstance(batch, list) and [m.shape for m in batch] == [(2, 3), (3, 3), (4, 3)]
    assert ds[torch.tensor(1)].shape == (3, 3) and ds[np.int64(2)].shape == (4, 3)
    # An Example's bytes features of one count and length: uint8 (N, count, length) both ways.
    with tablio.writer(f"tfrecord:{tmp_path}/b.tfrecord", type="example") as w:
        for i in range(4):
            w.append({"raw": [bytes([i] * 5)], "label": np.array([i])})
    per_sample = next(iter(torch.utils.data.DataLoader(tt.TableIterableDataset(f"tfrecord:{tmp_path}/b.tfrecord",
                                                                                type="example"),
                                                       batch_size=4, collate_fn=tt.collate)))
    batched = next(iter(tt.TableIterableDataset(f"tfrecord:{tmp_path}/b.tfrecord", type="example", batch_size=4)))
    for batch in (per_sample, batched):
        assert batch["raw"].dtype == torch.uint8 and batch["raw"].shape == (4, 1, 5)
        assert batch["label"].dtype == torch.int64 and batch["label"].shape == (4, 1)
    assert torch.equal(per_sample["raw"], batched["raw"]) and torch.equal(per_sample["label"], batched["label"])
    assert tt.collate([(torch.zeros(2), 1), (torch.ones(2), 2)])[1].dtype == torch.int64


def test_streaming_takes_repeated_keys_and_numbers_records_across_shards(tmp_path):
    # Read in order, a table may repeat a key (as Kaldi's sequential readers allow).
    with tablio.writer(f"ark:{tmp_path}/dup.ark", type="int32") as w:
        w["u1"], w["u2"] = 1, 2
        w["u1"] = 3
    ds = tt.TableIterableDataset(f"ark:{tmp_path}/dup.ark", type="int32", with_keys=True)
    assert [(k, int(v)) for k, v in ds] == [("u1", 1), ("u2", 2), ("u1", 3)]
    # TFRecord shards: record numbers run on across files, as when the table is read whole.
    for s in range(3):
        with tablio.writer(f"tfrecord:{tmp_path}/n-{s:05d}-of-00003", type="int32") as w:
            for i in range(4):
                w.append(10 * s + i)
    spec = f"tfrecord:{tmp_path}/n-*-of-00003"
    whole = [k for k, _ in tablio.open(spec, type="int32")]
    streamed = [k for k, _ in tt.TableIterableDataset(spec, type="int32", with_keys=True)]
    batched = [k for keys, _ in tt.TableIterableDataset(spec, type="int32", with_keys=True, batch_size=5)
               for k in keys]
    assert whole == streamed == batched == [f"{i:08d}" for i in range(12)]


def test_an_error_in_a_worker_keeps_its_place(tmp_path):
    # DataLoader makes a worker's exception again from its message: path and key stay.
    with tablio.writer(f"tfrecord:{tmp_path}/raw.tfrecord", type="example") as w:
        for i in range(20):
            w.append({"raw": [bytes(4 if i != 13 else 5)]})  # one value is no whole uint32
    ds = tt.TableIterableDataset(f"tfrecord:{tmp_path}/raw.tfrecord", type="example",
                                 decode_raw={"raw": np.uint32})
    with pytest.raises(tablio.FormatError) as caught:
        list(torch.utils.data.DataLoader(ds, batch_size=None, num_workers=1))
    assert caught.value.path == f"tfrecord:{tmp_path}/raw.tfrecord" and caught.value.key == "00000013"
    assert "DataLoader worker" in str(caught.value)  # the worker's traceback is still there


@pytest.mark.worker_processes
def test_persistent_workers_follow_set_epoch(tables):
    rspec, type_, n = tables["tfrecord16"]
    for context in ("spawn",) if os.environ.get("TABLIO_SANITIZED") else ("fork", "spawn"):  # (conftest.py)
        ds = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=3, with_keys=True)
        loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True,
                                             multiprocessing_context=context)
        orders = []
        for epoch in range(3):
            ds.set_epoch(epoch)
            orders.append([k for k, _ in loader])
        assert all(sorted(o) == sorted(orders[0]) and len(o) == n for o in orders)
        assert len({tuple(o) for o in orders}) == 3, context
        # the same orders as without persistent workers
        ds.set_epoch(1)
        fresh = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context=context)
        assert [k for k, _ in fresh] == orders[1]


def test_images_as_float_tensors_converted_in_cxx(tmp_path, tables):
    rspec, type_, n = tables["lmdb"]
    plain = tt.TableDataset(rspec, type=type_)
    scaled = tt.TableDataset(rspec, type=type_, scale=1 / 255)
    image, label = scaled[5]
    assert image.dtype == torch.float32 and label == 5
    assert torch.equal(image, plain[5][0].float() * np.float32(1 / 255))
    images, labels = next(iter(tt.TableIterableDataset(rspec, type=type_, batch_size=8, scale=1 / 255)))
    assert images.dtype == torch.float32 and images.shape == (8, 1, 4, 4)
    with tablio.writer(f"tfrecord:{tmp_path}/images.tfrecord", type="example") as w:
        for i in range(4):
            w.append({"image_raw": [bytes(range(i, i + 6))], "label": np.array([i]), "id": [b"x"]})
    as_image = {"features": ["image_raw", "label"], "decode_raw": {"image_raw": np.uint8}, "scale": 0.5}
    streamed = tt.TableIterableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example", **as_image)
    values = list(streamed)
    assert all(sorted(e) == ["image_raw", "label"] for e in values)
    assert [e["image_raw"].tolist() for e in values] == [[[(i + j) / 2 for j in range(6)]] for i in range(4)]
    mapped = tt.TableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example", **as_image)
    assert sorted(mapped[2]) == ["image_raw", "label"] and mapped[2]["label"].tolist() == [2]
    batch = next(iter(tt.TableIterableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example",
                                              batch_size=4, **as_image)))
    assert sorted(batch) == ["__missing__", "image_raw", "label"] and batch["image_raw"].shape == (4, 1, 6)


def arrays_in(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from arrays_in(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from arrays_in(v)


def test_tensors_share_the_readers_arrays_which_are_their_own(tmp_path):
    # The datasets make tensors of what readers return with no check, because every array a
    # reader returns (sequentially, by key or in batches) is its own: writable, native order.
    values = {
        "matrix": np.arange(6, dtype=np.float32).reshape(2, 3),
        "vector": np.arange(4, dtype=np.float64),
        "int-vector": np.array([1, -2, 3], np.int32),
        "int-vector-vector": [np.array([1], np.int32), np.array([2, 3], np.int32)],
        "int-pair-vector": np.array([[1, 2]], np.int32),
        "wave": (16000.0, np.array([[0, 1, -1]], np.float32)),
        "datum": (np.arange(12, dtype=np.uint8).reshape(1, 3, 4), 7),
        "example": {"f": np.array([0.5], np.float32), "i": np.array([3]), "b": [b"xyz"]},
        "sequence-example": ({"c": np.array([1])}, {"l": [np.array([1.5], np.float32)]}),
    }
    for type_, value in values.items():
        spec = (f"lmdb:{tmp_path}/{type_}" if type_ == "datum" else
                f"tfrecord:{tmp_path}/{type_}" if "example" in type_ else f"ark:{tmp_path}/{type_}.ark")
        with tablio.writer(spec, type=type_) as w:
            w.append(value)  # record numbers, which TFRecord keys are
            w.append(value)
        entries = list(tablio.open(spec, type=type_))
        read = [v for _, v in entries] + [tablio.random_access(spec, type=type_)[entries[1][0]]]
        read += [next(tablio.open(spec, type=type_).batches(2))[1]]
        arrays = [a for v in read for a in arrays_in(v)]
        assert arrays and all(a.flags.writeable and a.dtype.isnative for a in arrays), type_
    ds = tt.TableDataset(f"lmdb:{tmp_path}/datum", type="datum")
    image, _ = ds[0]
    image.fill_(0)  # changes the tensor (shared with its array), not what the next read gives
    assert ds[0][0].sum() == sum(range(12))
    # Arrays from elsewhere (tablio.idx.read's read-only views) are copied by to_tensors.
    tablio.idx.write(str(tmp_path / "x.idx"), np.arange(6, dtype=">i4").reshape(2, 3))
    view = tablio.idx.read(str(tmp_path / "x.idx"))
    assert not view.flags.writeable
    tensor = tt.to_tensors((view, 1))[0]
    assert tensor.dtype == torch.int32 and tensor.tolist() == [[0, 1, 2], [3, 4, 5]]
    tensor[0, 0] = 9  # writable, and the view unchanged
    assert view[0, 0] == 0


def test_a_table_that_shrank_since_it_was_counted_is_an_error(tmp_path):
    def write(n):
        with tablio.writer(f"tfrecord:{tmp_path}/t.tfrecord", type="example") as w:
            for i in range(n):
                w.append({"x": np.array([i])})
    write(10)
    per_sample = tt.TableIterableDataset(f"tfrecord:{tmp_path}/t.tfrecord", type="example")
    batched = tt.TableIterableDataset(f"tfrecord:{tmp_path}/t.tfrecord", type="example", batch_size=4)
    assert len(list(per_sample)) == 10 and len(list(batched)) == 3
    write(7)  # ranks would fall out of step: each must stop with an error instead
    for ds in (per_sample, batched):
        with pytest.raises(tablio.FormatError, match="fewer records than when it was counted") as caught:
            list(ds)
        assert caught.value.path == f"{tmp_path}/t.tfrecord"  # the file, not the specifier


# ---- torch.distributed, for real

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch_with_mp_spawn(world, config):
    """Ranks as torch.multiprocessing.spawn starts them (its default start method, spawn),
    bounded in time; every one is ended before returning."""
    context = torch.multiprocessing.start_processes(ddp_job.run, args=(world, dict(config, port=free_port())),
                                                    nprocs=world, join=False, start_method="spawn")
    deadline = time.monotonic() + DEADLINE
    try:
        while not context.join(timeout=1):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the distributed run took more than {DEADLINE} s")
    finally:
        for p in context.processes:
            if p.is_alive():
                p.kill()
            p.join(5)


def launch_with_torchrun(world, config):
    """Ranks as PyTorch's launcher starts them: separate processes with RANK, WORLD_SIZE,
    MASTER_ADDR and MASTER_PORT, from `python3 -m torch.distributed.run`, bounded in time.
    --redirects and --tee name a stream each: with their default, 0, Debian's PyTorch 1.13
    fails to start under Python 3.11 (docs/pytorch.md)."""
    logs = os.path.join(config["out"], "logs")
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", f"--nproc_per_node={world}",
               "--master_addr=127.0.0.1", f"--master_port={free_port()}", "--max_restarts=0",
               "--redirects=1", "--tee=1", f"--log_dir={logs}",
               os.path.join(os.path.dirname(__file__), "ddp_job.py"), json.dumps(config)]
    job = subprocess.Popen(command, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=dict(os.environ, OMP_NUM_THREADS="1"), text=True)
    try:
        output, _ = job.communicate(timeout=DEADLINE)
    finally:
        if job.poll() is None:  # the launcher and every rank it started
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    assert job.returncode == 0, output


# Every pair of settings appears in some run (a pairwise covering of 3 x 2 x 2 x 2 x 2), so
# that the job stays short: workers' start method; how ranks are launched; persistent
# workers; batches made by DataLoader from samples or by the dataset; shuffling. Workers
# "by default" are what a rank started by spawn gives them: spawn. The first run is 4 ranks
# with 3 workers each over 1003 records, uneven="drop".
MATRIX = [
    dict(workers_by=None, ranks_by="mp.spawn", persistent=False, batching="dataset", shuffle=True,
         world=4, workers=3, construct="before", uneven="drop"),
    dict(workers_by="fork", ranks_by="mp.spawn", persistent=False, batching="sample", shuffle=False,
         world=3, workers=2, construct="after", uneven="pad"),
    dict(workers_by="fork", ranks_by="torchrun", persistent=True, batching="dataset", shuffle=True,
         world=2, workers=2, construct="before", uneven="drop"),
    dict(workers_by="spawn", ranks_by="torchrun", persistent=True, batching="sample", shuffle=False,
         world=2, workers=2, construct="after", uneven="drop"),
    dict(workers_by="forkserver", ranks_by="mp.spawn", persistent=True, batching="sample", shuffle=True,
         world=3, workers=2, construct="after", uneven="drop"),
    dict(workers_by="forkserver", ranks_by="torchrun", persistent=False, batching="dataset", shuffle=False,
         world=2, workers=2, construct="before", uneven="pad"),
]


def matrix_id(run):
    return "-".join([run["workers_by"] or "default", run["ranks_by"], "persistent" if run["persistent"] else
                     "fresh", run["batching"], "shuffled" if run["shuffle"] else "ordered", f"{run['world']}x"
                     f"{run['workers']}"])


@pytest.fixture(scope="module")
def shards_1003(tmp_path_factory):
    """1003 records in 16 TFRecord shards of unequal sizes."""
    folder = tmp_path_factory.mktemp("shards_1003")
    key = 0
    for s in range(16):
        with tablio.writer(f"tfrecord,key=id:{folder}/s-{s:05d}-of-00016", type="example") as w:
            for _ in range(62 + (s < 11)):
                w[f"r{key:05d}"] = {"x": np.array([key])}
                key += 1
    assert key == 1003
    return f"tfrecord,key=id:{folder}/s-*-of-00016"


@pytest.mark.parametrize("run", MATRIX, ids=matrix_id)
def test_distributed_epochs_deliver_each_record_once(shards_1003, tmp_path, run):
    config = dict(run, rspec=shards_1003, batch=16, out=str(tmp_path))
    world = run["world"]
    (launch_with_mp_spawn if run["ranks_by"] == "mp.spawn" else launch_with_torchrun)(world, config)
    ranks = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(world)]
    if run["ranks_by"] == "mp.spawn" and run["workers_by"] is None:
        assert all(r["start_method"] == "spawn" for r in ranks)  # the reported case: spawned workers
    orders = []
    for epoch in range(2):
        per_rank = [[k for step in r["epochs"][epoch]["steps"] for k in step] for r in ranks]
        check_epoch(per_rank, 1003, world, run["uneven"])
        steps = {len(r["epochs"][epoch]["steps"]) for r in ranks}
        assert len(steps) == 1  # DDP's all-reduce meets every rank at every step
        assert all(r["epochs"][epoch]["most_steps"] == r["epochs"][epoch]["fewest_steps"] for r in ranks)
        if run["batching"] == "dataset":
            assert all(r["epochs"][epoch]["len"] == len(r["epochs"][epoch]["steps"]) for r in ranks)
            sizes = [len(step) for step in ranks[0]["epochs"][epoch]["steps"]]
            assert sizes[:-1] == [16] * (len(sizes) - 1)  # batches fill across shards and workers
        orders.append(per_rank)
    if run["shuffle"]:
        assert all(a != b for a, b in zip(*orders))  # a new order each epoch, on every rank
    else:
        assert orders[0] == orders[1]


@pytest.mark.worker_processes
def test_ddp_training_example(tmp_path):
    """examples/python/train_fashion_mnist_ddp.py with world size 2: tablio and torchvision give
    the same model."""
    pytest.importorskip("torchvision")
    if not os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
        pytest.skip("needs Debian's dataset-fashion-mnist")
    script = os.path.join(os.path.dirname(__file__), "../../examples/python/train_fashion_mnist_ddp.py")
    result = subprocess.run([sys.executable, script, "--world-size", "2", "--work", str(tmp_path), "--compare"],
                            capture_output=True, text=True, timeout=DEADLINE * 2)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "same model" in result.stdout


def bad_samples(folder, bad=("000005",)):
    """Two tar shards of six samples, keys 000000..000011: those in `bad` hold a json member
    that is no JSON."""
    os.makedirs(folder, exist_ok=True)
    for shard in range(2):
        with tablio.writer(f"tar:{folder}/s-{shard:06d}.tar", type="sample") as w:
            for i in range(shard * 6, shard * 6 + 6):
                key = f"{i:06d}"
                w[key] = {"cls": i, "json": b"{not json" if key in bad else json.dumps({"n": i}).encode()}
    return f"tar:{folder}/s-%06d.tar"


def test_on_error_skip_leaves_out_a_sample_that_fails_to_decode(tmp_path):
    spec = bad_samples(tmp_path)
    with pytest.raises(tablio.FormatError, match="000005"):
        list(tt.TableIterableDataset(spec, type="sample", decode=True))
    with pytest.raises(tablio.UsageError, match=r"the dataset yields batches \(its batch_size=4\): batch them once"):
        tt.DataLoader(tt.TableIterableDataset(spec, type="sample", batch_size=4), batch_size=4)
    with pytest.raises(tablio.UsageError, match="on_error is 'raise' or 'skip'"):
        tt.TableIterableDataset(spec, type="sample", decode=True, on_error="ignore")
    # One record at a time: its place is taken by the next, so every place yields.
    ds = tt.TableIterableDataset(spec, type="sample", decode=True, with_keys=True, on_error="skip")
    with pytest.warns(RuntimeWarning, match=r"left out 1 record that failed: .*s-000000.tar.*'000005'"):
        keys = [key for key, _ in ds]
    assert keys == [f"{i:06d}" for i in (0, 1, 2, 3, 4, 6, 6, 7, 8, 9, 10, 11)]
    # A last record left out: the first of the worker's part stands in.
    tail = tt.TableIterableDataset(bad_samples(tmp_path / "tail", bad=("000010", "000011")), type="sample",
                                   decode=True, with_keys=True, on_error="skip")
    with pytest.warns(RuntimeWarning):
        assert [key for key, _ in tail][-3:] == ["000009", "000000", "000000"]
    assert len(keys) == len(ds) and ds.skipped == 1
    # In batches: the batch is short of it, and there are as many batches.
    batched = tt.TableIterableDataset(spec, type="sample", decode=True, batch_size=4, with_keys=True, on_error="skip")
    with pytest.warns(RuntimeWarning):
        batches = list(batched)
    assert [len(keys) for keys, _ in batches] == [4, 3, 4] == [4, 4, 4][:1] + [3, 4]
    assert batches[1][1]["cls"].tolist() == [4, 6, 7] and "000005" not in batches[1][0]


@pytest.mark.parametrize("context,batch", [("fork", 2), ("spawn", 2), ("forkserver", None)])
def test_skipped_samples_are_counted_across_workers_and_resumed(tmp_path, context, batch):
    spec = bad_samples(tmp_path, bad=("000002", "000009"))
    make = lambda: tt.DataLoader(tt.TableIterableDataset(spec, type="sample", decode=True, batch_size=batch,
                                                         with_keys=True, on_error="skip"),
                                 batch_size=None, num_workers=2, multiprocessing_context=context)
    whole = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        everything = [keys for keys, _ in whole]
        assert whole.state_dict()["skipped"] == 2 and whole.dataset.skipped == 2
        kept = [f"{i:06d}" for i in range(12) if i not in (2, 9)]
        if batch:
            assert sorted(k for keys in everything for k in keys) == kept and len(everything) == 6
        else:  # each left out in its place, by the worker's next record
            assert sorted(set(everything)) == kept and len(everything) == 12
        first = make()
        it = iter(first)
        head = [next(it)[0] for _ in range(3)]
        state = first.state_dict()
        del it
        again = make()
        again.load_state_dict(state)
        rest = [keys for keys, _ in again]
    assert head + rest == everything  # exactly the uninterrupted epoch
    assert again.state_dict()["skipped"] == 2


def test_a_record_the_reader_cannot_convert_is_skipped_and_reading_goes_on(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/raw.tfrecord", type="example") as w:
        for i in range(20):
            w.append({"raw": [bytes(4 if i != 13 else 5)]})  # one value is no whole uint32
    ds = tt.TableIterableDataset(f"tfrecord:{tmp_path}/raw.tfrecord", type="example", with_keys=True,
                                 decode_raw={"raw": np.uint32}, batch_size=8, on_error="skip")
    with pytest.warns(RuntimeWarning, match="00000013"):
        keys = [k for batch, _ in ds for k in batch]
    assert keys == [f"{i:08d}" for i in range(20) if i != 13] and ds.skipped == 1


@pytest.mark.parametrize("context", ["fork", "spawn", "forkserver"])
def test_a_workers_error_keeps_its_key_path_and_offset_whole(tmp_path, context):
    keys = [f"speaker-0001-utterance-{i:06d}" for i in range(6)]
    with tablio.writer(f"tar:{tmp_path}/s.tar", type="sample") as w:
        for key in keys:
            w[key] = {"cls": 1, "json": b"{not json" if key == keys[3] else b'{"n": 1}'}
    spec = f"tar:{tmp_path}/s.tar"
    with pytest.raises(tablio.FormatError) as direct:
        list(tt.TableIterableDataset(spec, type="sample", decode=True))
    assert direct.value.key == keys[3]
    for batch_size, drop_last in ((None, False), (2, False), (4, True)):
        loader = tt.DataLoader(tt.TableIterableDataset(spec, type="sample", decode=True), batch_size=batch_size,
                               drop_last=drop_last, num_workers=1, multiprocessing_context=context)
        with pytest.raises(tablio.FormatError) as carried:
            list(loader)
        where = (carried.value.key, carried.value.path, carried.value.offset)
        assert where == (direct.value.key, direct.value.path, direct.value.offset)
    # Only the workers tablio's loader starts carry errors as items: the dataset is left as it was.
    assert getattr(loader.dataset, "_carried_errors", 0) == 0
    # torch's own DataLoader makes the error again from its message, which quotes 16 bytes of a key.
    plain = torch.utils.data.DataLoader(tt.TableIterableDataset(spec, type="sample", decode=True), batch_size=None,
                                        num_workers=1, multiprocessing_context=context)
    with pytest.raises(tablio.FormatError) as rebuilt:
        list(plain)
    assert rebuilt.value.key == keys[3][:16] + "..."


def test_a_record_whose_data_is_damaged_is_left_out_alone(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/d-00000-of-00001.tfrecord", type="example") as w:
        for i in range(20):
            w.append({"n": [i]})
    path = tmp_path / "d-00000-of-00001.tfrecord"
    data = bytearray(path.read_bytes())
    record = len(data) // 20
    data[13 * record + 14] ^= 0xFF  # inside record 13's data: its data CRC fails, its length holds
    path.write_bytes(bytes(data))
    with pytest.raises(tablio.DataLossError, match="corrupted record") as caught:
        list(tablio.open(f"tfrecord:{path}", type="example"))
    assert (caught.value.key, caught.value.offset, caught.value.path) == ("00000013", 13 * record + 12, str(path))
    reader = tablio.open(f"tfrecord:{path}", type="example")
    assert reader.skip(14) == 14 and next(reader)[0] == "00000014"  # skipped, never decoded
    # Left out alone, in records and in batches, and the epoch's places kept: the table reads on.
    for batch in (None, 8):
        ds = tt.TableIterableDataset(f"tfrecord:{tmp_path}/d-*-of-00001.tfrecord", type="example", with_keys=True,
                                     batch_size=batch, on_error="skip")
        with pytest.warns(RuntimeWarning, match="00000013"):
            items = list(ds)
        keys = [k for keys, _ in items for k in keys] if batch else [k for k, _ in items]
        expected = [f"{i:08d}" for i in range(20) if i != 13]
        assert (keys if batch else sorted(set(keys))) == expected and ds.skipped == 1


def test_a_damaged_record_that_keeps_its_key_is_left_out_alone_and_counted(tmp_path):
    with tablio.writer(f"tfrecord,key=key:{tmp_path}/k.tfrecord", type="example") as w:
        for i in range(20):
            w[f"utt{i:02d}"] = {"n": [i]}
    path = tmp_path / "k.tfrecord"
    data = bytearray(path.read_bytes())
    record = len(data) // 20
    data[13 * record + 14] ^= 0xFF  # record 13's data, which holds its key
    path.write_bytes(bytes(data))
    # Its key lost with it, the record is left out (counted once, with a warning) and the table
    # read on, as a matrix table whose keys are found in the records is.
    expected = [f"utt{i:02d}" for i in range(20) if i != 13]
    with pytest.warns(RuntimeWarning, match="left out 1 record that failed.*corrupted record"):
        ds = tt.TableIterableDataset(f"tfrecord,key=key:{path}", type="example", with_keys=True, on_error="skip")
    assert ds.skipped == 1
    loader = tt.DataLoader(ds, batch_size=None, num_workers=2, multiprocessing_context="spawn")
    assert sorted(k for k, _ in loader) == expected and ds.skipped == 1
    # Under p given, the table leaves it out itself, uncounted; the reader says how many.
    ds = tt.TableIterableDataset(f"tfrecord,key=key,p:{path}", type="example", with_keys=True, on_error="skip")
    assert [k for k, _ in ds] == expected and ds.skipped == 0
    with tablio.open(f"tfrecord,key=key,p:{path}", type="example") as reader:
        assert [k for k, _ in reader] == expected and reader.left_out == 1 and "corrupted record" in reader.error
    # Without on_error="skip", the error is raised with the place of the damage.
    with pytest.raises(tablio.DataLossError):
        tt.TableIterableDataset(f"tfrecord,key=key:{path}", type="example")


def test_a_datum_that_does_not_decode_is_left_out_alone(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    image = np.zeros((1, 2, 2), np.uint8)
    with tablio.writer(f"lmdb:{tmp_path}/db", type="datum") as w:
        for i in range(10):
            w[f"{i:08d}"] = (image, i)
    with lmdb.open(str(tmp_path / "db"), map_size=1 << 22) as env, env.begin(write=True) as txn:
        txn.put(b"00000004", txn.get(b"00000004")[:5])  # a Datum cut inside its data
    ds = tt.TableIterableDataset(f"lmdb:{tmp_path}/db", type="datum", with_keys=True, on_error="skip")
    with pytest.warns(RuntimeWarning, match="00000004"):
        keys = [k for k, _ in ds]
    assert sorted(set(keys)) == [f"{i:08d}" for i in range(10) if i != 4] and ds.skipped == 1


def test_a_table_unreadable_past_a_failure_has_the_rest_of_its_part_left_out(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/t-00000-of-00001.tfrecord", type="example") as w:
        for i in range(20):
            w.append({"n": [i]})
    tablio.shard_index.write(f"tfrecord:{tmp_path}/t-*-of-00001.tfrecord", type="example")
    data = bytearray((tmp_path / "t-00000-of-00001.tfrecord").read_bytes())
    record = len(data) // 20
    data[13 * record + 8] ^= 0xFF  # record 13's length checksum: nothing after it can be found
    (tmp_path / "t-00000-of-00001.tfrecord").write_bytes(bytes(data))
    ds = tt.TableIterableDataset(f"index:{tmp_path}/t.shardindex.json", type="example", with_keys=True,
                                 batch_size=8, on_error="skip")
    with pytest.warns(RuntimeWarning, match="6 records cannot be reached"):
        batches = [keys for keys, _ in ds]
    assert [len(b) for b in batches] == [8, 5, 0] and ds.skipped == 7


def test_a_map_style_dataset_skips_too(tmp_path):
    spec = bad_samples(tmp_path)
    ds = tt.TableDataset(spec.replace("%06d", "000000"), type="sample", decode=True, on_error="skip")
    with pytest.warns(RuntimeWarning, match="000005"):
        assert ds[5]["cls"] == 0  # the next record that decodes (around to the first)
        assert ds[[3, 4, 5]]["cls"].tolist() == [3, 4]  # a batch short of it
    assert ds.skipped == 2
    with pytest.raises(tablio.FormatError):
        tt.TableDataset(spec.replace("%06d", "000000"), type="sample", decode=True)[5]


def test_on_error_skip_counts_a_cut_shard_as_the_records_before_the_damage(tmp_path):
    spec = bad_samples(tmp_path, bad=())
    data = (tmp_path / "s-000001.tar").read_bytes()
    (tmp_path / "s-000001.tar").write_bytes(data[:len(data) // 2])  # cut inside a member
    with pytest.raises(tablio.FormatError, match="truncated"):
        tt.TableIterableDataset(spec, type="sample", decode=True)
    with pytest.warns(RuntimeWarning, match=r"s-000001.tar cannot be read past its record \d"):
        ds = tt.TableIterableDataset(spec, type="sample", decode=True, with_keys=True, on_error="skip")
    keys = [k for k, _ in ds]
    assert keys[:6] == [f"{i:06d}" for i in range(6)] and len(keys) == len(ds) == sum(ds.sizes) > 6
    # With a shard index written before the damage, the shard fails its check and is left out.
    (tmp_path / "s-000001.tar").write_bytes(data)
    tablio.shard_index.write(spec, type="sample")
    (tmp_path / "s-000001.tar").write_bytes(data[:len(data) // 2])
    indexed = tt.TableIterableDataset(f"index:{tmp_path}/s.shardindex.json", type="sample", decode=True,
                                      with_keys=True, batch_size=4, on_error="skip")
    with pytest.warns(RuntimeWarning, match="6 records cannot be reached"):
        batches = [keys for keys, _ in indexed]
    assert [len(b) for b in batches] == [4, 2, 0] and indexed.skipped == 6


def test_the_skipped_count_is_each_ranks_own(tmp_path):
    spec = bad_samples(tmp_path, bad=("000001", "000002", "000007"))
    states = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rank in range(2):
            loader = tt.DataLoader(tt.TableIterableDataset(spec, type="sample", decode=True, batch_size=3,
                                                           rank=rank, world_size=2, on_error="skip"),
                                   batch_size=None)
            list(loader)
            states.append(loader.state_dict())
        assert [(s["skipped"], s["skipped_rank"]) for s in states] == [(2, 0), (1, 1)]
        resumed = tt.DataLoader(tt.TableIterableDataset(spec, type="sample", decode=True, batch_size=3, rank=1,
                                                        world_size=2, on_error="skip"), batch_size=None)
        resumed.load_state_dict(states[0])  # rank 0's state, on rank 1: its own count starts anew
        assert list(resumed) == [] and resumed.state_dict()["skipped"] == 0


def test_a_cut_idx_file_gives_its_whole_items_under_skip(tmp_path):
    images = np.arange(10 * 4 * 4, dtype=np.uint8).reshape(10, 4, 4)
    tablio.idx.write(str(tmp_path / "images-idx3-ubyte"), images)
    data = (tmp_path / "images-idx3-ubyte").read_bytes()
    (tmp_path / "cut-idx3-ubyte").write_bytes(data[:len(data) - 20])  # items 0-8 whole
    spec = f"idx:{tmp_path}/cut-idx3-ubyte"
    with pytest.raises(tablio.FormatError, match="truncated"):
        tt.TableIterableDataset(spec)
    with pytest.warns(RuntimeWarning, match="cannot be read past its record 8.*10 items, as the header says"):
        ds = tt.TableIterableDataset(spec, on_error="skip", with_keys=True)
    got = list(ds)
    assert [k for k, _ in got] == [f"{i:08d}" for i in range(8)]
    assert all((v.numpy() == images[i]).all() for i, (_, v) in enumerate(got))


def test_a_damaged_record_of_a_later_shard_is_named_as_the_whole_table_names_it(tmp_path):
    for s in range(3):
        with tablio.writer(f"tfrecord:{tmp_path}/n-{s:05d}-of-00003", type="example") as w:
            for i in range(4):
                w.append({"n": [10 * s + i]})
    path = tmp_path / "n-00001-of-00003"
    data = bytearray(path.read_bytes())
    record = len(data) // 4
    data[2 * record + 14] ^= 0xFF  # the data of the shard's record 2: the table's 00000006
    path.write_bytes(bytes(data))
    spec = f"tfrecord:{tmp_path}/n-*-of-00003"
    with pytest.raises(tablio.DataLossError) as whole:
        list(tablio.open(spec, type="example"))
    with pytest.raises(tablio.DataLossError) as streamed:
        list(tt.TableIterableDataset(spec, type="example", with_keys=True, index=False))
    assert whole.value.key == streamed.value.key == "00000006"
    assert "(key '00000006')" in str(streamed.value) and streamed.value.path == str(path)
