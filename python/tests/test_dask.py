"""tablio.dask on a real distributed.LocalCluster: worker processes (each under a nanny that
restarts it) on loopback, as users run it on one machine before they point it at a cluster."""

import contextlib
import glob
import os
import signal
import time

import numpy as np
import pytest

import tablio

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
import tablio.dask  # noqa: E402  (after the skip)


@contextlib.contextmanager
def local_cluster(workers=2):
    """A LocalCluster of worker processes on loopback, ended (each process) when the block ends."""
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address="127.0.0.1:0", silence_logs=50) as cluster, \
            distributed.Client(cluster, timeout=60) as client:
        yield client


@pytest.fixture(scope="module")
def client():
    with local_cluster() as c:
        yield c


def matrices(n=23, seed=0):
    rng = np.random.default_rng(seed)
    return {f"utt{i:03d}": rng.standard_normal((5 + i % 7, 4)).astype(np.float32) for i in range(n)}


def write_ark(path, tables):
    with tablio.writer(f"ark:{path}", type="matrix") as w:
        for k, m in tables.items():
            w[k] = m


def partials(folder):
    return glob.glob(os.path.join(folder, "**", ".*partial*"), recursive=True)


def as_example(pair):
    key, m = pair
    return key, {"feats": m.ravel(), "shape": np.array(m.shape, dtype=np.int64)}


def test_ark_to_tfrecord_shards_reads_back_key_for_key(client, tmp_path):
    feats = matrices()
    write_ark(tmp_path / "feats.ark", feats)
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=4)
    assert bag.npartitions == 4
    written = tablio.dask.write(bag.map(as_example), f"tfrecord,key=key:{tmp_path}/out/train.tfrecord",
                                type="example")
    names = sorted(os.listdir(tmp_path / "out"))
    assert names == [f"train-0000{i}-of-00004.tfrecord" for i in range(4)] + ["train.shardindex.json"]
    assert written.index == f"{tmp_path}/out/train.shardindex.json"
    read_back = list(tablio.open(f"tfrecord,key=key:{tmp_path}/out/train-*-of-00004.tfrecord", type="example"))
    keys = [k for k, _ in read_back]
    assert keys == list(feats)
    for k, e in read_back:
        assert np.array_equal(e["feats"].reshape(e["shape"]), feats[k])
    index = tablio.shard_index.load(written.index)
    assert [s.samples for s in index.shards] == [6, 6, 6, 5]
    assert [os.path.basename(s.url) for s in index.shards] == names[:4]
    assert all(s.size == os.path.getsize(s.url) for s in index.shards)
    assert index.shards[1].first_key == "utt006" and index.shards[1].last_key == "utt011"
    assert [tuple(s) for s in written.shards] == [tuple(s) for s in index.shards]
    # Read back through the index, a partition per shard, with nothing listed.
    again = tablio.dask.read(f"tfrecord,key=key:{tmp_path}/out/train-*-of-00004.tfrecord", type="example")
    assert again.npartitions == 4 and again.pluck(0).compute() == keys
    assert tablio.dask.read(f"index:{written.index}", type="example").count().compute() == len(feats)


def test_tar_samples_reshard_into_tar_samples(client, tmp_path):
    with tablio.writer(f"tar,maxcount=7:{tmp_path}/in-%06d.tar", type="sample") as w:
        for i in range(30):
            w[f"s{i:04d}"] = {"cls": str(i % 3).encode(), "txt": f"sample {i}".encode()}
    source = tablio.dask.read(f"tar:{tmp_path}/in-%06d.tar", type="sample")
    assert source.npartitions == 5  # a partition per shard
    written = tablio.dask.write(source.repartition(3), f"tar:{tmp_path}/out/train-%06d.tar", type="sample")
    assert sorted(os.listdir(tmp_path / "out")) == [f"train-00000{i}.tar" for i in range(3)] + ["train.shardindex.json"]
    before = tablio.load(f"tar:{tmp_path}/in-%06d.tar", type="sample")
    after = tablio.load(f"tar:{tmp_path}/out/train-%06d.tar", type="sample")
    assert after[0] == before[0] and after[1] == before[1]
    index = tablio.shard_index.load(written.index)
    assert index.format == "tar" and index.value_type == "*" and sum(s.samples for s in index.shards) == 30


def fbank(pair):
    """A numpy feature function per utterance: log energies of 25 ms frames in 8 bands."""
    key, (rate, wave) = pair
    frame, shift = int(0.025 * rate), int(0.010 * rate)
    x = wave[0]
    count = 1 + (len(x) - frame) // shift
    frames = np.stack([x[i * shift:i * shift + frame] for i in range(count)]) * np.hamming(frame)
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    bands = np.stack([b.sum(axis=1) for b in np.array_split(power, 8, axis=1)], axis=1)
    return key, np.log(bands + 1e-6).astype(np.float32)


def test_wav_scp_to_compressed_ark_scp_splits_and_the_whole_script(client, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a recipe's folder: scripts name files relative to it
    rng = np.random.default_rng(1)
    os.mkdir("wav")
    with open("wav.scp", "w") as scp:
        for i in range(10):
            tablio.save_object(f"wav/u{i}.wav", (16000, rng.standard_normal((1, 4000 + 800 * i)).astype(np.float32)),
                               type="wave")
            scp.write(f"u{i} wav/u{i}.wav\n")
    utterances = tablio.dask.read("scp:wav.scp", type="wave", npartitions=3)
    written = tablio.dask.write(utterances.map(fbank), "ark,scp:data/feats.JOB.ark,data/feats.JOB.scp",
                                compression_method=2)
    assert written.wspecs == [f"ark,scp:data/feats.{j}.ark,data/feats.{j}.scp" for j in (1, 2, 3)]
    assert written.index == "data/feats.scp"
    assert sorted(os.listdir("data")) == ["feats.1.ark", "feats.1.scp", "feats.2.ark", "feats.2.scp",
                                          "feats.3.ark", "feats.3.scp", "feats.scp"]
    assert open("data/feats.1.scp").read().splitlines()[0] == "u0 data/feats.1.ark:3"  # the final names
    # What one process computes and writes with the same compression, key for key.
    with tablio.writer("ark:expected.ark", compression_method=2) as w:
        for pair in tablio.open("scp:wav.scp", type="wave"):
            key, feats = fbank(pair)
            w[key] = feats
    keys, values = tablio.load("scp:data/feats.scp", type="matrix")
    expected_keys, expected = tablio.load("ark:expected.ark", type="matrix")
    assert keys == expected_keys == [f"u{i}" for i in range(10)]
    assert all(np.array_equal(a, b) for a, b in zip(values, expected))
    split = tablio.load("ark:data/feats.2.ark", type="compressed-matrix")  # stored compressed
    assert split[0] == ["u4", "u5", "u6"]


def test_tables_of_one_file_split_by_ranges(client, tmp_path):
    images = np.arange(11 * 4 * 3, dtype=np.uint8).reshape(11, 4, 3)
    tablio.idx.write(str(tmp_path / "images-idx3-ubyte"), images)
    bag = tablio.dask.read(f"idx:{tmp_path}/images-idx3-ubyte", type="bytes", npartitions=3)
    assert bag.map_partitions(len).compute() == [4, 4, 3]  # as split_scp.pl splits
    assert bag.pluck(1).compute() == [bytes(image.tobytes()) for image in images]
    assert tablio.dask.read(f"idx:{tmp_path}/images-idx3-ubyte", type="bytes", keys=False).compute()[10] == \
        images[10].tobytes()


def killed_once(marker, key, folder):
    """Records of a partition, made as they are written; the first time `key` comes, the worker
    is killed with SIGKILL (after noting which unfinished shards it leaves)."""
    def records(pairs):
        for k, v in pairs:
            if k == key and not os.path.exists(marker):
                with open(marker, "w") as f:
                    f.write("\n".join(partials(folder)) if folder else "remote")
                os.kill(os.getpid(), signal.SIGKILL)
            yield k, v
    return records


def test_a_worker_killed_while_writing_leaves_every_record_once(client, tmp_path):
    feats = matrices(40)
    write_ark(tmp_path / "feats.ark", feats)
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=4)
    marker = tmp_path / "killed"
    out = tmp_path / "out"
    killer = killed_once(str(marker), "utt025", str(out))  # in the third partition, mid-way
    # Made as they are written: a partition's records reach the writer one by one.
    written = tablio.dask.write(bag.map(as_example).map_partitions(killer), f"tar:{out}/train-%06d.tar",
                                type="example")
    left = marker.read_text().split("\n")
    assert any(".train-000002.tar.partial-" in name for name in left)  # it died mid-shard
    assert partials(str(tmp_path)) == []  # its next attempt removed what it left
    assert sorted(os.listdir(out)) == [f"train-00000{i}.tar" for i in range(4)] + ["train.shardindex.json"]
    keys, examples = tablio.load(f"tar:{out}/train-%06d.tar", type="example")
    assert keys == list(feats)  # every record, once
    index = tablio.shard_index.load(written.index)
    assert [s.samples for s in index.shards] == [10, 10, 10, 10]
    assert all(s.size == os.path.getsize(s.url) for s in index.shards)


def test_a_task_run_again_writes_the_same_shards_under_the_same_names(client, tmp_path):
    feats = matrices(12)
    write_ark(tmp_path / "feats.ark", feats)
    out = tmp_path / "out"
    out.mkdir()
    (out / ".train-000001.tar.partial-dead").write_bytes(b"what a dead attempt left")
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=3).map(as_example)
    tablio.dask.write(bag, f"tar:{out}/train-%06d.tar", type="example")
    first = {name: (out / name).read_bytes() for name in os.listdir(out)}
    tablio.dask.write(bag, f"tar:{out}/train-%06d.tar", type="example")
    assert {name: (out / name).read_bytes() for name in os.listdir(out)} == first
    assert sorted(first) == ["train-000000.tar", "train-000001.tar", "train-000002.tar", "train.shardindex.json"]


def start_late(shard, ended):
    """Makes the writing of `shard` start late in this process, as a task does that a busy
    worker runs after another partition has already failed; the file `ended` appears when it
    has ended."""
    original = getattr(tablio.dask._write_shard, "original", tablio.dask._write_shard)

    def late(records, wspec, *rest):
        if shard not in wspec:
            return original(records, wspec, *rest)
        time.sleep(0.5)
        try:
            return original(records, wspec, *rest)
        finally:
            open(ended, "w").close()
    late.original = original
    tablio.dask._write_shard = late


def start_on_time():
    tablio.dask._write_shard = getattr(tablio.dask._write_shard, "original", tablio.dask._write_shard)


@pytest.mark.parametrize("scheduler", ["distributed", "threads"])
def test_a_record_that_cannot_be_written_fails_with_its_key_and_no_index(client, tmp_path, scheduler):
    feats = matrices(9)
    write_ark(tmp_path / "feats.ark", feats)
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=3)
    bad = bag.map(lambda kv: (kv[0], "not a matrix") if kv[0] == "utt004" else kv)
    run, compute = (client.run, dict(scheduler=client)) if scheduler == "distributed" else \
        (lambda f, *a: f(*a), dict(scheduler="threads", num_workers=2))
    ended = tmp_path / "feats.1 ended"
    run(start_late, "feats.1.", str(ended))  # still writing when feats.2's record fails
    try:
        with pytest.raises(TypeError, match="utt004"):
            tablio.dask.write(bad, f"ark,scp:{tmp_path}/out/feats.JOB.ark,{tmp_path}/out/feats.JOB.scp", **compute)
    finally:
        run(start_on_time)
    assert ended.exists()  # the failure was raised once no shard was still being written
    assert os.listdir(tmp_path / "out") == []  # no split appears, and no script of them all
    assert partials(str(tmp_path)) == []  # not even from the shard whose writing ended after the failure


def test_names_a_partition_cannot_write_alone_are_refused(tmp_path):
    bag = dask.bag.from_sequence([("a", np.zeros((1, 1), np.float32))], npartitions=1)
    for wspec, what in [("ark,scp:feats.JOB.ark,feats.scp", "every file needs"),
                        ("tar,maxcount=10:t-%06d.tar", "repartition"),
                        ("scp:feats.scp", "files a script lists"),
                        ("ark:| gzip -c > x.gz", "not a command"),
                        ("ark,scp:s3://b/f.JOB.ark,f.JOB.scp", "both local or both remote"),
                        ("tar:s-%04d-%04d.tar", "number once")]:
        with pytest.raises(tablio.UsageError, match=what):
            tablio.dask.write(bag, wspec)
    with pytest.raises(tablio.UsageError, match="repartition"):
        tablio.dask.read(f"tar:{tmp_path}/a.tar,{tmp_path}/b.tar", type="sample", npartitions=3)


def test_a_rewrite_that_fails_leaves_the_earlier_dataset_as_it_was(client, tmp_path):
    feats = matrices(12)
    write_ark(tmp_path / "feats.ark", feats)
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=3)
    tablio.dask.write(bag.map(as_example), f"tar:{tmp_path}/out/s-%04d.tar", type="example")
    tablio.dask.write(bag, f"ark,scp:{tmp_path}/k/f.JOB.ark,{tmp_path}/k/f.JOB.scp")
    before = {folder: {n: (tmp_path / folder / n).read_bytes() for n in os.listdir(tmp_path / folder)}
              for folder in ("out", "k")}
    changed = bag.map(lambda kv: (kv[0], kv[1] + 1))  # tonight's data, with one bad record
    bad = changed.map(lambda kv: (kv[0], "not a matrix") if kv[0] == "utt010" else kv)
    with pytest.raises(ValueError, match="utt010"):  # not an Example
        tablio.dask.write(bad.map(lambda kv: kv if isinstance(kv[1], str) else as_example(kv)),
                          f"tar:{tmp_path}/out/s-%04d.tar", type="example")
    with pytest.raises(TypeError, match="utt010"):
        tablio.dask.write(bad, f"ark,scp:{tmp_path}/k/f.JOB.ark,{tmp_path}/k/f.JOB.scp")
    after = {folder: {n: (tmp_path / folder / n).read_bytes() for n in os.listdir(tmp_path / folder)}
             for folder in ("out", "k")}
    assert after == before  # no shard of the failed writing appears, none of the earlier is lost
    assert partials(str(tmp_path)) == []


def test_shards_of_an_earlier_writing_are_not_left_beside_new_ones(client, tmp_path):
    write_ark(tmp_path / "feats.ark", matrices(12))
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=4)
    tablio.dask.write(bag, f"ark:{tmp_path}/out/feats.ark")
    with pytest.raises(tablio.UsageError, match=r"feats\.3\.ark, .*feats\.4\.ark: shards of an earlier writing"):
        tablio.dask.write(bag.repartition(2), f"ark:{tmp_path}/out/feats.ark")
    tablio.dask.write(bag, f"ark:{tmp_path}/out/feats.ark")  # the same names again: a rewrite
    examples = bag.map(as_example)
    tablio.dask.write(examples, f"tar:{tmp_path}/t/fm-%05d.tar", type="example")
    with pytest.raises(tablio.UsageError, match=r"fm\.shardindex\.json lists .*fm-00000\.tar"):
        tablio.dask.write(examples, f"tar:{tmp_path}/t/fm.tar", type="example")  # another naming, one index


def test_records_without_keys_are_numbered_on_across_shards_as_tablio_open_numbers_them(client, tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/in.tfrecord", type="bytes") as w:
        for i in range(10):
            w.append(f"record {i}".encode())
    source = tablio.dask.read(f"tfrecord:{tmp_path}/in.tfrecord", type="bytes", npartitions=3)
    assert source.pluck(0).compute() == [f"{i:08d}" for i in range(10)]
    written = tablio.dask.write(source, f"tfrecord:{tmp_path}/out/part.tfrecord", type="bytes")
    expected = tablio.load(f"tfrecord:{tmp_path}/out/part-*-of-00003.tfrecord", type="bytes")
    assert expected[0] == [f"{i:08d}" for i in range(10)]
    for rspec, options in [(f"tfrecord:{tmp_path}/out/part-*-of-00003.tfrecord", {}),  # planned by its index
                           (f"tfrecord:{tmp_path}/out/part-*-of-00003.tfrecord", {"index": False}),  # counted
                           (f"index:{written.index}", {})]:
        assert tablio.dask.read(rspec, type="bytes", **options).compute() == list(zip(*expected)), rspec


def test_the_index_keeps_the_key_feature_of_tfrecord_shards(client, tmp_path):
    feats = matrices(9)
    write_ark(tmp_path / "feats.ark", feats)
    bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=3).map(as_example)
    written = tablio.dask.write(bag, f"tfrecord,key=utt:{tmp_path}/out/train.tfrecord", type="example",
                                index=f"{tmp_path}/elsewhere/train.json")  # a folder of its own, made
    assert tablio.shard_index.load(written.index).key == "utt"
    assert tablio.dask.read(f"index:{written.index}", type="example").pluck(0).compute() == list(feats)
    assert list(tablio.random_access(f"index:{written.index}", type="example").keys()) == list(feats)


def test_errors_name_shards_by_their_own_names(client, tmp_path):
    bag = dask.bag.from_sequence([("a", {"f": np.zeros(1, np.float32)})], npartitions=1)
    with pytest.raises(tablio.UsageError) as raised:  # a TFRecord without key= keeps no keys
        tablio.dask.write(bag, f"tfrecord:{tmp_path}/t.tfrecord", type="example")
    assert "partial" not in str(raised.value) and f"{tmp_path}/t-00000-of-00001.tfrecord" in str(raised.value)

    def broken(pairs):
        for pair in pairs:
            yield pair
            raise RuntimeError("the feature function failed")
    with pytest.raises(RuntimeError, match="feature function") as raised:
        tablio.dask.write(bag.map_partitions(broken), f"tar:{tmp_path}/t-%04d.tar", type="example")
    assert any("after key 'a'" in note for note in raised.value.__notes__)
    assert partials(str(tmp_path)) == []


def test_a_worker_without_the_clients_folder_refuses_relative_names(tmp_path):
    with pytest.raises(tablio.UsageError, match="a folder this worker does not have"):
        with tablio.dask._folder.of_client(str(tmp_path / "not-here")):
            pass


@pytest.fixture
def s3_bucket(s3server, monkeypatch):
    for k, v in s3server.env().items():  # before the cluster starts: its workers take the environment
        monkeypatch.setenv(k, v)
    return s3server.create_bucket("dask-shards")


def test_a_worker_killed_while_uploading_leaves_every_record_once_in_s3(s3server, s3_bucket, tmp_path):
    feats = matrices(30)
    write_ark(tmp_path / "feats.ark", feats)
    marker = tmp_path / "killed"
    with local_cluster() as client:
        bag = tablio.dask.read(f"ark:{tmp_path}/feats.ark", type="matrix", npartitions=3)
        killer = killed_once(str(marker), "utt015", None)
        written = tablio.dask.write(bag.map(as_example).map_partitions(killer),
                                    f"tar:s3://{s3_bucket}/ds/train-%06d.tar", type="example", scheduler=client)
        from_index = tablio.dask.read(f"index:{written.index}", type="example").pluck(0).compute(scheduler=client)
    assert marker.exists()
    listed = sorted(o["Key"] for o in s3server.client().list_objects_v2(Bucket=s3_bucket)["Contents"])
    assert listed == [f"ds/train-00000{i}.tar" for i in range(3)] + ["ds/train.shardindex.json"]
    keys, _ = tablio.load(f"tar:s3://{s3_bucket}/ds/train-%06d.tar", type="example")
    assert keys == list(feats)
    index = tablio.shard_index.load(written.index)
    assert [s.samples for s in index.shards] == [10, 10, 10]
    assert from_index == keys


def test_dask_guide_examples_run(tmp_path, monkeypatch):
    """Every example of docs/dask.md runs, in order, in an empty folder, as a script run as
    __main__ (whose guarded part starts the cluster)."""
    import re
    from conftest import REPO
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "dask.md").read_text(), re.S)
    assert len(blocks) == 3
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, "docs/dask.md", "exec"), {"__name__": "__main__"})
    assert sorted(os.listdir("out")) == [f"train-0000{i}-of-00004.tfrecord" for i in range(4)] + \
        ["train.shardindex.json"]
    assert tablio.load("scp:data/feats.scp", type="matrix")[0] == [f"rec{i:02d}" for i in range(12)]
    assert sorted(os.listdir("labels")) == ["part-0000.tar", "part-0001.tar", "part-0002.tar", "part.shardindex.json"]
