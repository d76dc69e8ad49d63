"""tablio.torch: map-style and streaming datasets, split over DataLoader workers and
torch.distributed ranks (gloo on loopback, processes started by torch.multiprocessing), each
record exactly once per epoch."""

import collections
import itertools
import json
import os
import socket
import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

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


def fake_job(monkeypatch, rank, world, worker, workers):
    monkeypatch.setattr(tt, "_distributed", lambda: (rank, world))
    info = type("info", (), {"id": worker, "num_workers": workers})() if workers else None
    monkeypatch.setattr(torch.utils.data, "get_worker_info", lambda: info)


@pytest.mark.parametrize("name", ["lmdb", "tfrecord2", "tfrecord16"])
@pytest.mark.parametrize("uneven", ["drop", "pad", "allow"])
def test_every_record_once_over_ranks_and_workers(monkeypatch, tables, name, uneven):
    rspec, type_, n = tables[name]
    ds = tt.TableIterableDataset(rspec, type=type_, uneven=uneven, shuffle=True, seed=1, with_keys=True)
    for world, workers in itertools.product((1, 2, 3, 4), (0, 1, 3)):
        per_rank = []
        for rank in range(world):
            keys = []
            for worker in range(max(workers, 1)):
                fake_job(monkeypatch, rank, world, worker, workers)
                keys += [k for k, _ in ds]
            per_rank.append(keys)
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


def test_epochs_reshuffle_and_seeds_repeat(monkeypatch, tables):
    rspec, type_, _ = tables["lmdb"]
    fake_job(monkeypatch, 0, 1, 0, 0)
    ds = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=7, shuffle_buffer=16, with_keys=True)
    first = [k for k, _ in ds]
    ds.set_epoch(1)
    second = [k for k, _ in ds]
    again = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=7, shuffle_buffer=16, with_keys=True)
    again.set_epoch(1)
    assert first != second and sorted(first) == sorted(second)
    assert [k for k, _ in again] == second


def test_batches_for_dataloader_without_batching(monkeypatch, tables):
    rspec, type_, n = tables["lmdb"]
    fake_job(monkeypatch, 0, 1, 0, 0)
    ds = tt.TableIterableDataset(rspec, type=type_, batch_size=32)
    batches = list(torch.utils.data.DataLoader(ds, batch_size=None))
    assert [len(labels) for images, labels in batches] == [32, 32, 32, 7]
    assert batches[0][0].shape == (32, 1, 4, 4)


def test_example_collate(tables):
    rspec, type_, n = tables["tfrecord16"]
    ds = tt.TableIterableDataset(rspec, type=type_)
    batch = next(iter(torch.utils.data.DataLoader(ds, batch_size=5, collate_fn=tt.collate)))
    assert batch["x"].shape == (5, 1)


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
            w[f"{i}"] = {"image_raw": [bytes(range(i, i + 6))], "label": np.array([i]), "id": [b"x"]}
    as_image = {"features": ["image_raw", "label"], "decode_raw": {"image_raw": np.uint8}, "scale": 0.5}
    streamed = tt.TableIterableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example", **as_image)
    values = list(streamed)
    assert all(sorted(e) == ["image_raw", "label"] for e in values)
    assert [e["image_raw"].tolist() for e in values] == [[[(i + j) / 2 for j in range(6)]] for i in range(4)]
    mapped = tt.TableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example", **as_image)
    assert sorted(mapped[2]) == ["image_raw", "label"] and mapped[2]["label"].tolist() == [2]
    batch = next(iter(tt.TableIterableDataset(f"tfrecord:{tmp_path}/images.tfrecord", type="example",
                                              batch_size=4, **as_image)))
    assert sorted(batch) == ["image_raw", "label"] and batch["image_raw"].shape == (4, 1, 6)


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
            w["a"], w["b"] = value, value
        entries = list(tablio.open(spec, type=type_))  # TFRecord keys: record numbers
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
                w[f"{i}"] = {"x": np.array([i])}
    write(10)
    per_sample = tt.TableIterableDataset(f"tfrecord:{tmp_path}/t.tfrecord", type="example")
    batched = tt.TableIterableDataset(f"tfrecord:{tmp_path}/t.tfrecord", type="example", batch_size=4)
    assert len(list(per_sample)) == 10 and len(list(batched)) == 3
    write(7)  # ranks would fall out of step: each must stop with an error instead
    for ds in (per_sample, batched):
        with pytest.raises(tablio.FormatError, match="fewer records than when it was counted") as caught:
            list(ds)
        assert caught.value.path == f"tfrecord:{tmp_path}/t.tfrecord"


# ---- torch.distributed, for real

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, world, port, rspec, type_, workers, uneven, out):
    torch.distributed.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                         world_size=world, timeout=__import__("datetime").timedelta(seconds=60))
    try:
        ds = tt.TableIterableDataset(rspec, type=type_, shuffle=True, seed=5, uneven=uneven, with_keys=True)
        epochs = []
        for epoch in range(2):
            ds.set_epoch(epoch)
            loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=workers,
                                                 multiprocessing_context="fork" if workers else None)
            keys = [key for key, _ in loader]
            steps = torch.tensor([len(keys)])
            torch.distributed.all_reduce(steps, op=torch.distributed.ReduceOp.MAX)  # all must agree
            epochs.append({"keys": keys, "max_steps": int(steps)})
        with open(f"{out}/rank{rank}.json", "w") as f:
            json.dump(epochs, f)
    finally:
        torch.distributed.destroy_process_group()


def run_job(fn, world, args):
    """Starts world processes, bounded in time; every one is ended before returning."""
    context = torch.multiprocessing.start_processes(fn, args=(world,) + args, nprocs=world, join=False,
                                                    start_method="spawn")
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


@pytest.mark.parametrize("name,world,workers,uneven", [
    ("lmdb", 2, 0, "drop"), ("lmdb", 3, 2, "pad"), ("tfrecord2", 3, 2, "drop"),
    ("tfrecord16", 2, 2, "pad"), ("tfrecord16", 3, 0, "drop"), ("scp", 2, 2, "drop"),
])
def test_distributed_epochs_deliver_each_record_once(tables, tmp_path, name, world, workers, uneven):
    rspec, type_, n = tables[name]
    run_job(rank_main, world, (free_port(), rspec, type_, workers, uneven, str(tmp_path)))
    ranks = [json.load(open(tmp_path / f"rank{r}.json")) for r in range(world)]
    for epoch in range(2):
        per_rank = [r[epoch]["keys"] for r in ranks]
        check_epoch(per_rank, n, world, uneven)
        assert all(r[epoch]["max_steps"] == len(per_rank[0]) for r in ranks)
    assert ranks[0][0]["keys"] != ranks[0][1]["keys"]  # a new epoch, a new order


def test_ddp_training_example(tmp_path):
    """examples/python/train_fashion_mnist_ddp.py with world size 2: tablio and torchvision give
    the same model."""
    pytest.importorskip("torchvision")
    if os.environ.get("TABLIO_SANITIZED"):
        pytest.skip("trained in the plain build: minutes under AddressSanitizer")
    if not os.path.exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"):
        pytest.skip("needs Debian's dataset-fashion-mnist")
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), "../../examples/python/train_fashion_mnist_ddp.py")
    result = subprocess.run([sys.executable, script, "--world-size", "2", "--work", str(tmp_path), "--compare"],
                            capture_output=True, text=True, timeout=DEADLINE * 2)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "same model" in result.stdout
