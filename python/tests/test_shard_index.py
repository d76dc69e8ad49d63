"""Shard indexes: written beside the shards by every writer of shards, read as WebDataset's wids
reads them, and used by the streaming dataset to plan epochs without a pass over the data."""

import json
import os
import subprocess

import numpy as np
import pytest

import tablio
from tablio import shard_index
from conftest import loader_workers


def write_shards(folder, n=7, per_shard=3, name="train-%06d.tar"):
    with tablio.writer(f"tar,maxcount={per_shard}:{folder}/{name}", type="int32") as w:
        for i in range(n):
            w[f"s{i:03d}"] = i


def test_numbered_tar_shards_are_indexed_beside_them(tmp_path):
    write_shards(tmp_path)
    desc = json.loads((tmp_path / "train.shardindex.json").read_text())
    assert desc["__kind__"] == "wids-shard-index-v1" and desc["wids_version"] == 1 and desc["name"] == "train"
    assert desc["format"] == "tar" and desc["value_type"] == "bin"  # the members KEY.bin
    assert [(s["url"], s["nsamples"], s["filesize"], s["first_key"], s["last_key"], s["sorted"])
            for s in desc["shardlist"]] == [
        (f"train-{k:06d}.tar", count, os.path.getsize(tmp_path / f"train-{k:06d}.tar"), first, last, True)
        for k, count, first, last in [(0, 3, "s000", "s002"), (1, 3, "s003", "s005"), (2, 1, "s006", "s006")]]
    index = shard_index.load(str(tmp_path / "train.shardindex.json"))
    assert [s.url for s in index.shards] == [f"{tmp_path}/train-{k:06d}.tar" for k in range(3)]
    assert sum(s.samples for s in index.shards) == 7


def test_shard_and_index_shards_write_the_same_index(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/all.tfrecord", type="int32") as w:
        for i in range(10):
            w.append(i)
    tablio.shard(f"tfrecord:{tmp_path}/all.tfrecord", f"tfrecord:{tmp_path}/part.tfrecord", 3)
    written = (tmp_path / "part.shardindex.json").read_text()
    assert [s["nsamples"] for s in json.loads(written)["shardlist"]] == [4, 3, 3]
    os.remove(tmp_path / "part.shardindex.json")
    assert shard_index.write(f"tfrecord:{tmp_path}/part-*-of-00003.tfrecord") == f"{tmp_path}/part.shardindex.json"
    assert (tmp_path / "part.shardindex.json").read_text() == written


def test_shards_other_tools_wrote_are_indexed(tmp_path):
    # Shards in WebDataset's layout, made by GNU tar: members KEY.txt.
    for k in range(2):
        folder = tmp_path / f"src{k}"
        folder.mkdir()
        for i in range(4):
            (folder / f"{k}{i:03d}.txt").write_text(f"sample {k} {i}")
        subprocess.run(["tar", "-cf", str(tmp_path / f"web-{k:06d}.tar"), "-C", str(folder)] +
                       sorted(os.listdir(folder)), check=True)
    assert shard_index.write(f"tar,ext=txt:{tmp_path}/web-%06d.tar") == f"{tmp_path}/web.shardindex.json"
    desc = json.loads((tmp_path / "web.shardindex.json").read_text())
    assert desc["value_type"] == "txt" and [s["nsamples"] for s in desc["shardlist"]] == [4, 4]
    assert [s["first_key"] for s in desc["shardlist"]] == ["0000", "1000"]


def test_a_streaming_dataset_plans_from_the_index_without_counting(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    write_shards(tmp_path, n=50, per_shard=8)

    def no_counting(self, rspec):
        raise AssertionError(f"{rspec} was counted")

    counted = tt.TableIterableDataset(f"tar:{tmp_path}/train-%06d.tar", type="int32", index=False)
    monkeypatch.setattr(tt.TableIterableDataset, "_count", no_counting)
    for spec, options in ((f"tar:{tmp_path}/train-%06d.tar", {}),  # found beside the shards
                          (f"tar:{tmp_path}/train-*.tar", {}),
                          (f"index:{tmp_path}/train.shardindex.json", {}),
                          (f"tar:{tmp_path}/train-%06d.tar", {"index": str(tmp_path / "train.shardindex.json")})):
        ds = tt.TableIterableDataset(spec, type="int32", shuffle=True, batch_size=4, **options)
        assert ds.sizes == counted.sizes
        assert [t.partition(":")[2] for t in ds.tables] == [t.partition(":")[2] for t in counted.tables]
        values = sorted(int(v) for batch in torch.utils.data.DataLoader(ds, batch_size=None, **loader_workers(2))
                        for v in batch)
        assert values == list(range(50))


def test_an_index_of_other_shards_is_not_used_and_a_wrong_one_is_an_error(tmp_path):
    pytest.importorskip("torch")
    import tablio.torch as tt
    write_shards(tmp_path, n=9, per_shard=3)
    # Another sharding of the same table in the same folder: its index is not this one's.
    tablio.shard(f"tar:{tmp_path}/train-%06d.tar", f"tar:{tmp_path}/train.tar", 2, type="int32")
    ds = tt.TableIterableDataset(f"tar:{tmp_path}/train-%06d.tar", type="int32")
    assert ds.index is None and ds.sizes == [3, 3, 3]
    assert tt.TableIterableDataset(f"tar:{tmp_path}/train-*-of-00002.tar", type="int32").index is not None
    # A shard rewritten after it was indexed: its size no longer agrees.
    with tablio.writer(f"tar:{tmp_path}/train-00001-of-00002.tar", type="int32") as w:
        for i in range(50):
            w[f"x{i}"] = i
    ds = tt.TableIterableDataset(f"tar:{tmp_path}/train-*-of-00002.tar", type="int32")
    with pytest.raises(tablio.FormatError) as caught:
        list(ds)
    assert "train-00001-of-00002.tar has" in str(caught.value) and "train.shardindex.json says" in str(caught.value)


def test_an_index_of_other_members_than_are_read_is_refused_not_planned_from(tmp_path):
    pytest.importorskip("torch")
    import tablio.torch as tt
    for n in range(2):  # samples, one of each shard lacking its cls
        with tablio.writer(f"tar:{tmp_path}/g-{n:06d}.tar", type="sample") as w:
            for i in range(5):
                w[f"{n}{i:04d}"] = {"jpg": b"J", "cls": i} if i != 3 else {"jpg": b"J"}
    shard_index.write(f"tar,ext=cls:{tmp_path}/g-%06d.tar", type="bytes")  # counts 8 cls members
    index = f"{tmp_path}/g.shardindex.json"
    for spec, type in [(f"tar:{tmp_path}/g-%06d.tar", "sample"), (f"index:{index}", "sample"),
                       (f"tar,ext=jpg:{tmp_path}/g-%06d.tar", "bytes")]:
        with pytest.raises(tablio.UsageError, match="counts the members KEY.cls, but this reads") as e:
            tt.TableIterableDataset(spec, type=type)
        assert "index=False" in str(e.value)
    with pytest.raises(tablio.UsageError, match="samples"):
        tt.TableDataset(f"index:{index}", type="sample")
    with pytest.raises(tablio.UsageError, match="samples"):
        tablio.random_access(f"index:{index}", type="sample")
    with pytest.raises(tablio.UsageError, match="lists tar shards, but they are read as tfrecord"):
        tt.TableIterableDataset(f"tfrecord:{tmp_path}/g-%06d.tar", type="bytes")
    # What it counts, it plans: the cls members, by their extension or through the index.
    assert len(list(tt.TableIterableDataset(f"tar,ext=cls:{tmp_path}/g-%06d.tar", type="bytes"))) == 8
    assert len(tt.TableIterableDataset(f"index:{index}", type="bytes")) == 8
    # Counted instead, the samples are all there.
    ds = tt.TableIterableDataset(f"tar:{tmp_path}/g-%06d.tar", type="sample", index=False)
    assert ds.index is None and len(ds) == 10 and len(list(ds)) == 10


def test_an_index_as_wids_writes_it_is_read(tmp_path):
    write_shards(tmp_path, n=6, per_shard=3, name="w-%06d.tar")
    (tmp_path / "sub").mkdir()
    desc = {"__kind__": "wids-shard-index-v1", "wids_version": 1, "name": "w",
            "shardlist": [{"url": f"../w-{k:06d}.tar", "nsamples": 3, "filesize": os.path.getsize(
                tmp_path / f"w-{k:06d}.tar"), "md5sum": "x"} for k in range(2)]}
    (tmp_path / "sub" / "wids.json").write_text(json.dumps(desc))
    index = shard_index.load(str(tmp_path / "sub" / "wids.json"))
    assert index.format is None and [s.samples for s in index.shards] == [3, 3]
    assert [key for spec in index.rspecs() for key, _ in tablio.open(spec, type="int32")] == \
        [f"s{i:03d}" for i in range(6)]
    for bad, what in (({"wids_version": 2, "shardlist": []}, "wids_version 2"),
                      ({"shardlist": [{"url": "a.tar"}]}, "no count of samples"),
                      ({"shardlist": [{"nsamples": 3}]}, "no 'url'")):
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(tablio.FormatError, match=what):
            shard_index.load(str(tmp_path / "bad.json"))
    (tmp_path / "bad.json").write_text(json.dumps({"shardlist": [{"url": "a.tar", "nsamples": -3}]}))
    with pytest.raises(tablio.FormatError, match=r"shard 0 \('a.tar'\) has no count of samples"):
        shard_index.load(str(tmp_path / "bad.json"))
    whole = (tmp_path / "sub" / "wids.json").read_text()
    for name, content in (("truncated.json", whole[:len(whole) // 2]), ("corrupt.json", "{not json")):
        (tmp_path / name).write_text(content)
        with pytest.raises(tablio.FormatError, match=f"{name} is not a shard index \\(JSON\\)") as caught:
            shard_index.load(str(tmp_path / name))
        assert caught.value.path == str(tmp_path / name)
    # A shard given where its index was meant: not UTF-8, not an index.
    with pytest.raises(tablio.FormatError, match="not a shard index"):
        shard_index.load(str(tmp_path / "w-000000.tar"))


def test_an_oversized_index_is_refused_before_it_is_read_whole(tmp_path, monkeypatch):
    write_shards(tmp_path)
    monkeypatch.setattr(shard_index, "MAX_INDEX_BYTES", 100)
    with pytest.raises(tablio.FormatError) as caught:
        shard_index.load(str(tmp_path / "train.shardindex.json"))
    assert "expected at most 100 bytes" in str(caught.value) and caught.value.path.endswith("train.shardindex.json")


def test_wids_accepts_the_index_when_it_is_installed(tmp_path):
    wids = pytest.importorskip("wids")
    write_shards(tmp_path, n=6, per_shard=3)
    ds = wids.ShardListDataset(str(tmp_path / "train.shardindex.json"))
    assert len(ds) == 6


def uploaded_behind_a_proxy(s3server, fault_proxy, tmp_path, monkeypatch, bucket, n, per_shard):
    """Shards s-%06d.tar of n records in all, written locally and uploaded to bucket/train/, to
    be read with no local cache through a proxy that records the requests: (client, proxy)."""
    s3server.create_bucket(bucket)
    write_shards(tmp_path, n=n, per_shard=per_shard, name="s-%06d.tar")
    client = s3server.client()
    for name in sorted(os.listdir(tmp_path)):
        client.upload_file(str(tmp_path / name), bucket, f"train/{name}")
    proxy = fault_proxy(s3server.endpoint)
    for k, v in s3server.env(proxy.url).items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TABLIO_CACHE", "")
    return client, proxy


def test_a_dataset_over_a_thousand_shards_in_a_bucket_reads_only_their_index(s3server, fault_proxy, tmp_path,
                                                                               monkeypatch):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    client, proxy = uploaded_behind_a_proxy(s3server, fault_proxy, tmp_path, monkeypatch, "indexed-thousand", 1000, 1)
    bucket = "indexed-thousand"
    ds = tt.TableIterableDataset(f"tar:s3://{bucket}/train/s-%06d.tar", type="int32", batch_size=100)
    assert [(r.method, r.path) for r in proxy.requests] == [("GET", f"/{bucket}/train/s.shardindex.json")]
    assert len(ds.tables) == 1000 and sum(ds.sizes) == 1000 and len(ds) == 10
    # Reading a shard checks its size against the index first.
    first = next(iter(ds))
    assert [int(v) for v in first] == list(range(100))
    client.put_object(Bucket=bucket, Key="train/s-000000.tar", Body=b"\0" * 20480)
    with pytest.raises(tablio.FormatError, match="s-000000.tar has 20480 bytes"):
        next(iter(tt.TableIterableDataset(f"tar:s3://{bucket}/train/s-%06d.tar", type="int32")))


def test_brace_patterns_name_shards_in_a_bucket_and_find_their_index(s3server, tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    bucket = s3server.create_bucket("braces")
    for k, v in s3server.env().items():
        monkeypatch.setenv(k, v)
    write_shards(f"s3://{bucket}/web", n=7, per_shard=3, name="s-%06d.tar")
    keys = [key for key, _ in tablio.open(f"tar:s3://{bucket}/web/s-{{000000..000002}}.tar", type="int32")]
    assert keys == [f"s{i:03d}" for i in range(7)]
    with pytest.raises(FileNotFoundError, match="cannot find shard 3 of 4"):
        tablio.load(f"tar:s3://{bucket}/web/s-{{000000..000003}}.tar", type="int32")
    ds = tt.TableIterableDataset(f"tar:s3://{bucket}/web/s-{{000000..000002}}.tar", type="int32")
    assert ds.index is not None and sorted(int(v) for v in ds) == list(range(7))


def test_lookups_through_the_index_open_only_the_shard_whose_range_holds_the_key(tmp_path):
    write_shards(tmp_path, n=15, per_shard=3)
    for k in (0, 2, 3, 4):  # only shard 1 (s003..s005) is left
        os.remove(tmp_path / f"train-{k:06d}.tar")
    r = tablio.random_access(f"index:{tmp_path}/train.shardindex.json", type="int32")
    assert len(r) == 15  # the index's count: no shard opened
    assert r["s004"] == 4 and r.get("s003") == 3 and "s005" in r
    assert r.lookup(["s005", "s003"]) == [5, 3]
    # Between two shards' ranges, past the last, before the first: absent, with nothing opened.
    assert "s0055" not in r and "zzz" not in r and "a" not in r and r.get("s0025", -1) == -1
    with pytest.raises(KeyError, match="no entry 's0055' in the shards of"):
        r["s0055"]
    # A key whose shard is gone is an error, never an absent key.
    with pytest.raises(FileNotFoundError, match="train-000003.tar"):
        r["s010"]
    assert r.at(4) == ("s004", 4)
    r.close()


def test_an_index_opened_for_reading_in_order_says_how_to_read_its_shards(tmp_path):
    write_shards(tmp_path, n=6, per_shard=3)
    index = f"{tmp_path}/train.shardindex.json"
    with pytest.raises(tablio.UsageError, match="names a shard index.*rspecs"):
        tablio.open(f"index:{index}", type="int32")
    values = [v for spec in shard_index.load(index).rspecs() for _, v in tablio.open(spec, type="int32")]
    assert values == list(range(6))


def test_lookups_in_shards_whose_keys_the_index_does_not_bound_ask_them_in_order(tmp_path):
    # Keys out of order: the index bounds no shard, and every key is still found.
    with tablio.writer(f"tar,maxcount=3:{tmp_path}/u-%06d.tar", type="int32") as w:
        for i in (5, 1, 7, 0, 3, 2, 8, 6, 4):
            w[f"k{i}"] = i
    desc = json.loads((tmp_path / "u.shardindex.json").read_text())
    assert ["sorted" in s for s in desc["shardlist"]] == [False, False, False]
    r = tablio.random_access(f"index:{tmp_path}/u.shardindex.json", type="int32")
    assert [r[f"k{i}"] for i in range(9)] == list(range(9)) and "k9" not in r
    assert r.keys() == [f"k{i}" for i in (5, 1, 7, 0, 3, 2, 8, 6, 4)]
    # A wids index, with no keys at all: the same.
    write_shards(tmp_path, n=6, per_shard=3, name="w-%06d.tar")
    desc = {"wids_version": 1, "shardlist": [{"url": f"w-{k:06d}.tar", "nsamples": 3} for k in range(2)]}
    (tmp_path / "wids.json").write_text(json.dumps(desc))
    r = tablio.random_access(f"index:{tmp_path}/wids.json", type="int32")
    assert r.lookup(["s005", "s000"]) == [5, 0] and r.get("s006") is None


def test_samples_are_looked_up_through_the_index_decoded(tmp_path):
    with tablio.writer(f"tar,maxcount=2:{tmp_path}/web-%06d.tar", type="sample") as w:
        for i in range(5):
            w[f"{i:04d}"] = {"cls": i, "txt": f"sample {i}"}
    r = tablio.random_access(f"index:{tmp_path}/web.shardindex.json", type="sample", decode=True)
    assert r["0003"] == {"cls": 3, "txt": "sample 3"}
    assert r.at(4) == ("0004", {"cls": 4, "txt": "sample 4"})


def test_a_shard_that_changed_since_it_was_indexed_is_an_error_on_lookup(tmp_path):
    write_shards(tmp_path, n=6, per_shard=3)
    with tablio.writer(f"tar:{tmp_path}/train-000001.tar", type="int32") as w:  # 12 records, not 3
        for i in range(3, 15):
            w[f"s{i:03d}"] = i
    r = tablio.random_access(f"index:{tmp_path}/train.shardindex.json", type="int32")
    assert r["s001"] == 1
    with pytest.raises(tablio.FormatError, match="train-000001.tar has 20480 bytes, and its shard index .* says 10240"):
        r["s004"]
    desc = json.loads((tmp_path / "train.shardindex.json").read_text())
    desc["shardlist"][1]["filesize"] = os.path.getsize(tmp_path / "train-000001.tar")  # sizes agree, counts do not
    (tmp_path / "train.shardindex.json").write_text(json.dumps(desc))
    r = tablio.random_access(f"index:{tmp_path}/train.shardindex.json", type="int32")
    with pytest.raises(tablio.FormatError, match="train-000001.tar has 12 records, and its shard index .* says 3"):
        r.at(4)


def test_a_map_style_dataset_over_an_index_opens_only_the_shards_it_reads(tmp_path):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    write_shards(tmp_path, n=9, per_shard=3)
    os.remove(tmp_path / "train-000002.tar")
    ds = tt.TableDataset(f"index:{tmp_path}/train.shardindex.json", type="int32")
    assert len(ds) == 9 and len(ds.keys) == 9
    assert int(ds[4]) == 4 and int(ds[-7]) == 2 and ds.keys[3] == "s003" and ds.keys[:2] == ["s000", "s001"]
    assert [int(v) for v in ds[[5, 0, 3]]] == [5, 0, 3]
    with pytest.raises(FileNotFoundError, match="train-000002.tar"):
        ds[7]
    with pytest.raises(IndexError):
        ds[9]
    # Spawned workers (the test's own process under the sanitizers), each opening the shards it
    # reads; a DistributedSampler over two ranks.
    write_shards(tmp_path, n=9, per_shard=3)
    ds = tt.TableDataset(f"index:{tmp_path}/train.shardindex.json", type="int32")
    seen = []
    for rank in range(2):
        sampler = tt.DistributedSampler(ds, num_replicas=2, rank=rank, shuffle=True, seed=3)
        loader = torch.utils.data.DataLoader(ds, batch_size=2, sampler=sampler, **loader_workers(2, "spawn"))
        seen += [int(v) for batch in loader for v in batch]
    assert sorted(set(seen)) == list(range(9)) and len(seen) == 10  # padded to 5 a rank


def test_a_lookup_in_a_bucket_requests_only_the_index_and_the_shard_that_holds_the_key(s3server, fault_proxy,
                                                                                       tmp_path, monkeypatch):
    bucket = "indexed-lookup"
    _, proxy = uploaded_behind_a_proxy(s3server, fault_proxy, tmp_path, monkeypatch, bucket, 60, 3)
    r = tablio.random_access(f"index:s3://{bucket}/train/s.shardindex.json", type="int32")
    assert r["s031"] == 31 and r.lookup(["s032", "s030"]) == [32, 30] and "s0305" not in r
    assert {path for _, path in [(q.method, q.path) for q in proxy.requests]} == {
        f"/{bucket}/train/s.shardindex.json", f"/{bucket}/train/s-000010.tar"}
    import tablio.torch as tt
    pytest.importorskip("torch")
    before = len(proxy.requests)
    ds = tt.TableDataset(f"index:s3://{bucket}/train/s.shardindex.json", type="int32")
    assert len(ds) == 60 and int(ds[59]) == 59
    assert {q.path for q in proxy.requests[before:]} == {
        f"/{bucket}/train/s.shardindex.json", f"/{bucket}/train/s-000019.tar"}


def test_record_numbers_name_records_across_the_shards_as_the_whole_table_numbers_them(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/all.tfrecord", type="int32") as w:
        for i in range(10):
            w.append(i * 10)
    tablio.shard(f"tfrecord:{tmp_path}/all.tfrecord", f"tfrecord:{tmp_path}/part.tfrecord", 3)  # 4, 3, 3
    os.remove(tmp_path / "part-00000-of-00003.tfrecord")
    r = tablio.random_access(f"index:{tmp_path}/part.shardindex.json", type="int32")
    # The second shard's own first record is 00000000; through the index it is the table's 00000004.
    assert r["00000004"] == 40 and r.lookup(["00000009", "00000005"]) == [90, 50] and r.at(6) == ("00000006", 60)
    assert "00000010" not in r and "4" not in r and r.get("0000005") is None
    with pytest.raises(FileNotFoundError, match="part-00000-of-00003.tfrecord"):
        r["00000001"]


def test_a_shard_with_more_records_than_its_index_says_is_an_error_not_a_loss(tmp_path):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    write_shards(tmp_path, n=6, per_shard=3)
    with tablio.writer(f"tar:{tmp_path}/train-000001.tar", type="int32") as w:  # 4 records: the same 10240 bytes
        for i in range(3, 7):
            w[f"s{i:03d}"] = i
    for batch_size in (None, 2):
        ds = tt.TableIterableDataset(f"index:{tmp_path}/train.shardindex.json", type="int32", batch_size=batch_size)
        with pytest.raises(tablio.FormatError, match="train-000001.tar has more than the 3 records"):
            list(ds)


def test_an_index_names_files_never_commands_or_lists(tmp_path):
    write_shards(tmp_path, n=3, per_shard=3)
    for url in ("echo hi |", "| cat", "a.tar,b.tar"):
        (tmp_path / "bad.json").write_text(json.dumps({"shardlist": [{"url": url, "nsamples": 1}]}))
        with pytest.raises(tablio.FormatError, match="names no file or object"):
            tablio.random_access(f"index:{tmp_path}/bad.json", type="int32")
    (tmp_path / "bad.json").write_text(json.dumps({"not": "an index"}))
    with pytest.raises(tablio.FormatError, match="no 'shardlist'"):
        shard_index.load(str(tmp_path / "bad.json"))
    twice = {"shardlist": [{"url": "train-000000.tar", "nsamples": 3}, {"url": "train-000000.tar", "nsamples": 3}]}
    (tmp_path / "bad.json").write_text(json.dumps(twice))
    with pytest.raises(tablio.FormatError, match="lists .*train-000000.tar twice"):
        shard_index.load(str(tmp_path / "bad.json"))
    (tmp_path / "bad.json").write_text(json.dumps({"shardlist": [{"url": "a.tar", "nsamples": 2 ** 62,
                                                                  "filesize": 10240}]}))
    with pytest.raises(tablio.FormatError, match="has 4611686018427387904 samples in 10240 bytes"):
        shard_index.load(str(tmp_path / "bad.json"))
    (tmp_path / "bad.json").write_text(json.dumps({"shardlist": [{"url": "a.tar", "nsamples": 2 ** 63}]}))
    with pytest.raises(tablio.FormatError, match="no count of samples"):
        shard_index.load(str(tmp_path / "bad.json"))


def test_keys_that_are_not_utf8_are_indexed_as_python_names_them(tmp_path):
    with tablio.writer(f"tar,maxcount=2:{tmp_path}/k-%06d.tar", type="int32") as w:
        for i, key in enumerate(["a", "caf\udce9", "z\u00e9"]):
            w[key] = i
    text = (tmp_path / "k.shardindex.json").read_bytes()
    assert b'"caf\\udce9"' in text and "z\u00e9".encode() in text  # JSON, UTF-8 throughout
    index = shard_index.load(str(tmp_path / "k.shardindex.json"))
    assert [s.last_key for s in index.shards] == ["caf\udce9", "z\u00e9"]
    r = tablio.random_access(f"index:{tmp_path}/k.shardindex.json", type="int32")
    assert r["caf\udce9"] == 1 and r["z\u00e9"] == 2


def test_messages_never_show_a_presigned_urls_signature_or_credentials(tmp_path):
    url = "https://user:secret@host.example/train/s-000000.tar?X-Amz-Signature=abc123&X-Amz-Credential=AKIA"
    (tmp_path / "bad.json").write_text(json.dumps({"shardlist": [{"url": url}]}))
    with pytest.raises(tablio.FormatError) as caught:
        shard_index.load(str(tmp_path / "bad.json"))
    assert "('https://host.exa...') has no count" in str(caught.value)  # 16 characters of it
    for secret in ("secret", "abc123", "AKIA", "user"):
        assert secret not in str(caught.value)
    assert shard_index.shown("/data/a?b#c.tar") == "/data/a?b#c.tar"  # a file's name is its own


def test_braces_use_the_index_only_when_they_name_its_shards(tmp_path):
    pytest.importorskip("torch")
    import tablio.torch as tt
    write_shards(tmp_path, n=12, per_shard=3)  # train-000000.tar .. train-000003.tar, indexed
    some = f"tar:{tmp_path}/train-{{000000..000001}}.tar"
    assert shard_index.find(some) is None  # a subset: its records are not the index's
    ds = tt.TableIterableDataset(some, type="int32")
    assert ds.index is None and len(ds) == 6 and sorted(list(ds)) == list(range(6))
    every = f"tar:{tmp_path}/train-{{000000..000003}}.tar"
    assert shard_index.find(every) is not None and len(tt.TableIterableDataset(every, type="int32")) == 12
    # Braces naming shards that are not there are an error, as opening them is.
    more = f"tar:{tmp_path}/train-{{000000..000099}}.tar"
    assert shard_index.find(more) is None
    with pytest.raises(FileNotFoundError):
        tt.TableIterableDataset(more, type="int32")


def test_an_index_of_record_numbers_is_not_used_for_shards_read_under_their_key_feature(tmp_path):
    """Shards of a TFRecord file of matrices copied as bytes keep each record's "key" feature, but
    their index lists record numbers: reading them as matrices (under that feature) does not use
    it where it was found, and refuses it where it is named."""
    keys = [f"utt-{i}" for i in range(5)]
    with tablio.writer(f"tfrecord:{tmp_path}/f.tfrecord", type="matrix") as w:
        for i, key in enumerate(keys):
            w[key] = np.full((2, 3), i, np.float32)
    tablio.shard(f"tfrecord:{tmp_path}/f.tfrecord", f"tfrecord:{tmp_path}/s.tfrecord", 2)  # as bytes
    index = shard_index.load(str(tmp_path / "s.shardindex.json"))
    assert not index.key and index.keys_differ("matrix") and not index.keys_differ("example")
    pattern = f"tfrecord:{tmp_path}/s-*-of-00002.tfrecord"
    assert [k for k, _ in tablio.open(pattern, type="matrix")] == keys
    with pytest.raises(tablio.UsageError, match="lists the records by number"):
        tablio.random_access(f"index:{tmp_path}/s.shardindex.json", type="matrix")
    assert list(tablio.random_access(f"index:{tmp_path}/s.shardindex.json", type="example").keys()) == \
        [f"{i:08d}" for i in range(5)]
    torch_datasets = pytest.importorskip("tablio.torch")
    ds = torch_datasets.TableIterableDataset(pattern, type="matrix", with_keys=True)
    assert ds.index is None and [k for k, _ in ds] == keys
    # Shards written as matrices name their feature, and their index lists their keys.
    tablio.shard(f"tfrecord:{tmp_path}/f.tfrecord", f"tfrecord:{tmp_path}/m.tfrecord", 2, type="matrix")
    index = shard_index.load(str(tmp_path / "m.shardindex.json"))
    assert index.key == "key" and [s.first_key for s in index.shards] == ["utt-0", "utt-3"]
    assert tablio.random_access(f"index:{tmp_path}/m.shardindex.json", type="matrix")["utt-4"][0, 0] == 4


def test_a_script_over_tfrecord_renames_its_entries_as_kaldi_scripts_do(tmp_path):
    with tablio.writer(f"tfrecord,scp:{tmp_path}/f.tfrecord,{tmp_path}/f.scp", type="matrix") as w:
        w["utt-a"] = np.ones((1, 2), np.float32)
    (tmp_path / "sp.scp").write_text("".join("sp1.1-" + line + "\n"
                                             for line in (tmp_path / "f.scp").read_text().splitlines()))
    [(key, value)] = list(tablio.open(f"scp:{tmp_path}/sp.scp", type="matrix"))
    assert key == "sp1.1-utt-a" and value.shape == (1, 2)
    # Asked to, a script's keys are checked against the records'.
    with pytest.raises(tablio.FormatError, match="the record of key 'utt-a'"):
        list(tablio.open(f"scp,key=key:{tmp_path}/sp.scp", type="matrix"))
