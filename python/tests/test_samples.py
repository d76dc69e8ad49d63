"""WebDataset samples: tar shards in WebDataset's layout (written by Python's tarfile as
WebDataset's TarWriter writes them, and by GNU tar) read as the samples WebDataset groups;
samples tablio writes, grouped back by tarfile as WebDataset groups them; decoding; bad
samples; and the PyTorch datasets over samples."""

import gc
import io
import json
import re
import subprocess
import tarfile

import numpy as np
import pytest

import tablio

# WebDataset's rule: a member's key is its path up to the first '.' of its last component;
# metadata ("__NAME__" as the first folder, or the whole name) is skipped.
_KEY = re.compile(r"^((?:.*/|)[^.]+)[.]([^/]*)$")
_META = re.compile(r"__[^/]*__($|/)")


def group_as_webdataset(path):
    """[(key, {ext: bytes})] as WebDataset's tar expander and group_by_keys group a shard
    (with its default lcase=True: extensions lowercased)."""
    samples = []
    with tarfile.open(path) as tar:
        for member in tar:
            if not member.isreg() or _META.match(member.name):
                continue
            found = _KEY.match(member.name)
            if not found:
                continue
            key, ext = found.group(1), found.group(2).lower()
            if not samples or samples[-1][0] != key:
                samples.append((key, {}))
            assert ext not in samples[-1][1]
            samples[-1][1][ext] = tar.extractfile(member).read()
    return samples


def write_like_webdataset(path, samples):
    """A shard as WebDataset's TarWriter writes one: each sample's members in sorted
    extension order, read-only, owner "bigdata", the tarfile default (pax) format."""
    with tarfile.open(path, "w") as tar:
        for key, members in samples:
            for ext in sorted(members):
                info = tarfile.TarInfo(f"{key}.{ext}")
                info.size, info.mode, info.mtime, info.uname, info.gname = len(members[ext]), 0o444, 1e9, "bigdata", "bigdata"
                tar.addfile(info, io.BytesIO(members[ext]))


def npy(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


SAMPLES = [
    ("000000", {"jpg": b"\xff\xd8jpeg0", "cls": b"3", "json": b'{"caption": "a cat"}'}),
    ("000001", {"jpg": b"\xff\xd8jpeg1"}),  # members missing
    ("shard.v2/train.data/000002", {"cls": b"1", "seg.png": b"\x89PNG", "txt": "été".encode()}),  # dots in folders
    ("long/" + "x" * 120, {"npy": npy(np.eye(2, dtype=np.float32)), "cls": b"0"}),  # a name only a pax header holds
]


def test_shards_tarfile_writes_as_webdataset_does_read_as_its_samples(tmp_path):
    write_like_webdataset(tmp_path / "a.tar", SAMPLES)
    expected = group_as_webdataset(tmp_path / "a.tar")
    assert [k for k, _ in expected] == [k for k, _ in SAMPLES]
    assert list(tablio.open(f"tar:{tmp_path}/a.tar", type="sample")) == expected
    by_key = tablio.random_access(f"tar:{tmp_path}/a.tar", type="sample")
    assert by_key["shard.v2/train.data/000002"] == dict(SAMPLES[2][1]) and len(by_key) == 4


def test_shards_gnu_tar_writes_read_as_the_same_samples(tmp_path):
    files = tmp_path / "files"
    for key, members in SAMPLES[:3]:
        for ext, data in members.items():
            (files / f"{key}.{ext}").parent.mkdir(parents=True, exist_ok=True)
            (files / f"{key}.{ext}").write_bytes(data)
    (files / "shard.v2" / "README").write_text("no extension: skipped")
    names = [f"{key}.{ext}" for key, members in SAMPLES[:3] for ext in members]
    names.insert(3, "shard.v2/README")
    for fmt in ("gnu", "ustar", "posix"):
        subprocess.run(["tar", f"--format={fmt}", "-C", files, "-cf", tmp_path / f"{fmt}.tar", *names], check=True)
        read = list(tablio.open(f"tar:{tmp_path}/{fmt}.tar", type="sample"))
        assert read == group_as_webdataset(tmp_path / f"{fmt}.tar")
        assert [k for k, _ in read] == [k for k, _ in SAMPLES[:3]]


def test_extensions_read_lowercased_and_metadata_skipped_as_webdataset_groups(tmp_path):
    with tarfile.open(tmp_path / "mixed.tar", "w") as tar:
        for name, data in [("__meta__/info.json", b"{}"), ("a/k1.JPG", b"J"), ("a/k1.Cls", b"1"),
                           ("__k2__.Txt", b"t"), ("a/k3.Seg.PNG", b"P"), ("__end__", b"")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    read = list(tablio.open(f"tar:{tmp_path}/mixed.tar", type="sample"))
    assert read == group_as_webdataset(tmp_path / "mixed.tar") == [
        ("a/k1", {"jpg": b"J", "cls": b"1"}), ("__k2__", {"txt": b"t"}), ("a/k3", {"seg.png": b"P"})]
    # What would read back otherwise is refused, and nothing of it is written.
    with tablio.writer(f"tar:{tmp_path}/w.tar", type="sample") as w:
        with pytest.raises(tablio.UsageError, match="'k.JPG' would read back as extension 'jpg'"):
            w["k"] = {"cls": 1, "JPG": b"J"}
        with pytest.raises(tablio.UsageError, match="skipped as WebDataset's metadata"):
            w["__meta__/k"] = {"jpg": b"J"}
        w["k"] = {"jpg": b"J"}
    assert group_as_webdataset(tmp_path / "w.tar") == [("k", {"jpg": b"J"})]


def test_pax_headers_are_read_record_by_record(tmp_path):
    # A path record that holds the text " size=" sets no size: the member after it keeps its own.
    inner = io.BytesIO()
    with tarfile.open(fileobj=inner, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("a000.txt")
        info.size = 8
        tar.addfile(info, io.BytesIO(b"INJECTED"))
    with tarfile.open(tmp_path / "pax.tar", "w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in [("a000.jpg", b"JPEG"), ("notes/a size=9 " + "x" * 90 + "/LICENSE", inner.getvalue()[:1024]),
                           ("a001.jpg", b"JPEG2")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    read = list(tablio.open(f"tar:{tmp_path}/pax.tar", type="sample"))
    assert read == group_as_webdataset(tmp_path / "pax.tar") == [("a000", {"jpg": b"JPEG"}), ("a001", {"jpg": b"JPEG2"})]


def test_samples_tablio_writes_group_back_through_tarfile(tmp_path):
    with tablio.writer(f"tar:{tmp_path}/w.tar", type="sample") as w:
        for key, members in SAMPLES:
            w[key] = members
        w["000009"] = {"jpg": bytearray(b"J"), "cls": 7, "json": {"a": [1, 2]}, "npy": np.arange(4, dtype=np.int16),
                       "txt": "héllo"}
    grouped = group_as_webdataset(tmp_path / "w.tar")
    assert grouped[:4] == SAMPLES
    assert grouped[4][1]["cls"] == b"7" and json.loads(grouped[4][1]["json"]) == {"a": [1, 2]}
    decoded = dict(tablio.open(f"tar:{tmp_path}/w.tar", type="sample", decode=True))["000009"]
    assert decoded["cls"] == 7 and decoded["json"] == {"a": [1, 2]} and decoded["txt"] == "héllo"
    assert decoded["npy"].dtype == np.int16 and decoded["npy"].tolist() == [0, 1, 2, 3]
    assert decoded["jpg"] == b"J"  # images stay bytes unless a decoder is given
    by_key = tablio.random_access(f"tar:{tmp_path}/w.tar", type="sample", decode={"jpg": len})
    assert by_key["000009"]["jpg"] == 1 and by_key["000000"]["json"] == {"caption": "a cat"}
    with pytest.raises(TypeError, match="no conventional encoding"):
        with tablio.writer(f"tar:{tmp_path}/bad.tar", type="sample") as w:
            w["k"] = {"jpg": 1.5}


def test_bad_samples_are_errors_naming_file_offset_and_key(tmp_path):
    write_like_webdataset(tmp_path / "dup.tar", [("k", {"cls": b"1"})])
    data = (tmp_path / "dup.tar").read_bytes()
    header_and_data = data[:1024] if data[156:157] != b"x" else data[:2048]
    (tmp_path / "dup.tar").write_bytes(header_and_data * 2 + bytes(1024))
    with pytest.raises(tablio.FormatError, match="one member of each extension") as e:
        list(tablio.open(f"tar:{tmp_path}/dup.tar", type="sample"))
    assert e.value.path == f"{tmp_path}/dup.tar" and e.value.offset == len(header_and_data)
    (tmp_path / "cut.tar").write_bytes(data[:600])
    with pytest.raises(tablio.FormatError) as e:
        list(tablio.open(f"tar:{tmp_path}/cut.tar", type="sample"))
    assert e.value.path == f"{tmp_path}/cut.tar" and e.value.offset is not None
    write_like_webdataset(tmp_path / "text.tar", [("k", {"cls": b"not a number"})])
    with pytest.raises(tablio.FormatError, match="member .cls") as e:
        list(tablio.open(f"tar:{tmp_path}/text.tar", type="sample", decode=True))
    assert e.value.key == "k" and e.value.path == f"{tmp_path}/text.tar"
    again = tablio.FormatError(str(e.value))  # as a DataLoader worker's error is made again
    assert (again.path, again.key) == (f"{tmp_path}/text.tar", "k")
    with pytest.raises(tablio.UsageError, match="applies to type 'sample'"):
        tablio.open(f"tar,ext=cls:{tmp_path}/text.tar", type="bytes", decode=True)


def test_a_sample_cut_short_is_an_error_naming_its_key_never_a_sample_without_the_member(tmp_path):
    samples = [(f"{i:06d}", {"cls": b"%d" % i, "jpg": bytes([i]) * 5000}) for i in range(3)]
    write_like_webdataset(tmp_path / "whole.tar", samples)
    data = (tmp_path / "whole.tar").read_bytes()
    with tarfile.open(tmp_path / "whole.tar") as tar:
        jpg = tar.getmember("000002.jpg")  # after 000002.cls: the cut leaves that sample short
    (tmp_path / "cut.tar").write_bytes(data[:jpg.offset_data + 1000])
    got = []
    with pytest.raises(tablio.FormatError, match="the archive is truncated") as e:
        for key, sample in tablio.open(f"tar:{tmp_path}/cut.tar", type="sample"):
            got.append((key, sorted(sample)))
    assert got == [("000000", ["cls", "jpg"]), ("000001", ["cls", "jpg"])]
    assert (e.value.path, e.value.offset, e.value.key) == (f"{tmp_path}/cut.tar", jpg.offset, "000002")
    # The same through a pipe, whose size is not known ahead: found inside the data, said alike.
    got = []
    with pytest.raises(tablio.FormatError, match="end of input inside them .the archive is truncated") as e:
        for key, sample in tablio.open(f"tar:cat {tmp_path}/cut.tar |", type="sample"):
            got.append((key, sorted(sample)))
    assert got == [("000000", ["cls", "jpg"]), ("000001", ["cls", "jpg"])]
    assert (e.value.offset, e.value.key) == (jpg.offset, "000002")
    # Cut inside 000002.jpg's pax header, which names no key yet: 000002 may lack a member.
    (tmp_path / "cut.tar").write_bytes(data[:jpg.offset + 512 + 10])
    got = []
    with pytest.raises(tablio.FormatError, match="of a tar extended header .*the archive is truncated") as e:
        got.extend(key for key, _ in tablio.open(f"tar:{tmp_path}/cut.tar", type="sample"))
    assert got == ["000000", "000001"] and e.value.offset == jpg.offset


def test_a_header_zeroed_inside_a_shard_is_an_error_not_its_end(tmp_path):
    samples = [(f"{i:06d}", {"cls": b"%d" % i, "jpg": bytes([i]) * 700}) for i in range(4)]
    write_like_webdataset(tmp_path / "whole.tar", samples)
    data = bytearray((tmp_path / "whole.tar").read_bytes())
    with tarfile.open(tmp_path / "whole.tar") as tar:
        jpg = tar.getmember("000002.jpg")  # after 000002.cls: the zeroed header may be its member
    data[jpg.offset:jpg.offset + 512] = bytes(512)
    (tmp_path / "zeroed.tar").write_bytes(data)
    with tarfile.open(tmp_path / "zeroed.tar") as tar:
        assert len(tar.getmembers()) == 5  # tarfile ends there quietly
    got = []
    with pytest.raises(tablio.FormatError, match="a lone zero block followed by more data") as e:
        got.extend(key for key, _ in tablio.open(f"tar:{tmp_path}/zeroed.tar", type="sample"))
    assert got == ["000000", "000001"] and e.value.offset == jpg.offset


def test_extensions_not_utf8_read_as_keys_do(tmp_path):
    with tarfile.open(tmp_path / "x.tar", "w", format=tarfile.GNU_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as tar:
        info = tarfile.TarInfo("a000.j\udcffg")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"J"))
    assert list(tablio.open(f"tar:{tmp_path}/x.tar", type="sample")) == [("a000", {"j\udcffg": b"J"})]
    assert tablio.random_access(f"tar:{tmp_path}/x.tar", type="sample")["a000"] == {"j\udcffg": b"J"}
    with tablio.writer(f"tar:{tmp_path}/y.tar", type="sample") as w:  # and back
        w["a000"] = {"j\udcffg": b"J"}
    assert (tmp_path / "y.tar").read_bytes()[:9] == b"a000.j\xffg\0"


def test_a_member_name_with_control_bytes_is_quoted_printably(tmp_path):
    with tarfile.open(tmp_path / "ctl.tar", "w") as tar:
        info = tarfile.TarInfo("a\x1b[2J\rb.jpg")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    with pytest.raises(tablio.FormatError, match="whitespace or unprintable bytes") as e:
        list(tablio.open(f"tar:{tmp_path}/ctl.tar", type="sample"))
    assert "'a\\x1b[2J\\x0db.jpg'" in str(e.value) and "\x1b" not in str(e.value) and e.value.offset == 0


def test_a_batch_read_while_another_is_converted_keeps_its_own(tmp_path):
    # Python code run during a batch's conversion (here a garbage collector's callback) may read
    # a batch of another table on the same thread.
    for name in ("A", "B"):
        with tablio.writer(f"tar:{tmp_path}/{name}.tar", type="sample") as w:
            for i in range(200):
                w[f"{i:04d}"] = {"jpg": f"{name}{i}".encode() * (i % 7 + 1), "cls": i}
    other = tablio.open(f"tar:{tmp_path}/B.tar", type="sample")
    inner = []

    def collect(phase, info):
        if phase == "start" and not inner:
            inner.append(next(other.batches(150)))

    threshold = gc.get_threshold()
    gc.collect()
    gc.callbacks.append(collect)
    gc.set_threshold(50)
    try:
        keys, values = next(tablio.open(f"tar:{tmp_path}/A.tar", type="sample").batches(200))
    finally:
        gc.callbacks.remove(collect)
        gc.set_threshold(*threshold)
    assert inner, "the callback ran no batch"
    assert [v["jpg"] for v in values] == [f"A{i}".encode() * (i % 7 + 1) for i in range(200)]
    assert [v["jpg"] for v in inner[0][1]] == [f"B{i}".encode() * (i % 7 + 1) for i in range(150)]


def test_a_batch_of_more_than_its_kept_buffers_is_whole(tmp_path):
    # A batch keeps the buffers its samples were read into until it converts them; past 64 MB of
    # them it converts what it has as it goes. Samples across two buffers come as copies.
    rng = np.random.default_rng(4)
    jpgs = [rng.bytes(int(n)) for n in rng.integers(0, 120_000, 1300)]  # about 78 MB
    with tablio.writer(f"tar:{tmp_path}/big.tar", type="sample") as w:
        for i, jpg in enumerate(jpgs):
            w[f"{i:05d}"] = {"jpg": jpg, "cls": i}
    keys, values = tablio.load(f"tar:{tmp_path}/big.tar", type="sample")
    assert keys == [f"{i:05d}" for i in range(len(jpgs))]
    assert all(v == {"jpg": jpg, "cls": str(i).encode()} for i, (v, jpg) in enumerate(zip(values, jpgs)))
    with tablio.open(f"tar:{tmp_path}/big.tar", type="sample") as table:
        parts = [values for _, values in table.batches(97)]
    assert sum(parts, []) == values


def test_samples_that_would_read_back_otherwise_are_refused(tmp_path):
    with tablio.writer(f"tar:{tmp_path}/s.tar", type="sample") as w:
        with pytest.raises(tablio.UsageError, match="has no member"):
            w["k0"] = {}
        w["k1"] = {"cls": 1}
        with pytest.raises(tablio.UsageError, match="two samples in a row of key 'k1'"):
            w["k1"] = {"jpg": b"J"}
    assert list(tablio.open(f"tar:{tmp_path}/s.tar", type="sample")) == [("k1", {"cls": b"1"})]
    with pytest.raises(tablio.UsageError, match=r"a sample \(ext=\*\) has several"):
        with tablio.writer(f"tar,scp:{tmp_path}/t.tar,{tmp_path}/t.scp", type="sample") as w:
            w["k"] = {"jpg": b"J"}
    # Resharded as records, samples would become one member KEY.bin each.
    with pytest.raises(tablio.UsageError, match=r"reads samples \(ext=\*\), which .* would write as members KEY.bin"):
        tablio.shard(f"tar,ext=*:{tmp_path}/s.tar", f"tar:{tmp_path}/blob.tar", 2, type="bytes")
    assert tablio.shard(f"tar,ext=*:{tmp_path}/s.tar", f"tar,ext=*:{tmp_path}/re.tar", 1, type="bytes") == [
        (f"tar,ext=*:{tmp_path}/re-00000-of-00001.tar", 1)]


def test_torch_datasets_read_samples(tmp_path):
    torch = pytest.importorskip("torch")
    from tablio.torch import TableDataset, TableIterableDataset, collate

    with tablio.writer(f"tar,maxcount=5:{tmp_path}/s-%04d.tar", type="sample") as w:
        for i in range(12):
            w[f"{i:06d}"] = {"jpg": bytes([i]) * 3, "cls": i % 4}
    stream = TableIterableDataset(f"tar:{tmp_path}/s-{{0000..0002}}.tar", type="sample", decode=True, with_keys=True)
    assert stream.index is not None  # found beside the shards
    got = list(stream)
    assert [k for k, _ in got] == [f"{i:06d}" for i in range(12)]
    assert [v["cls"] for _, v in got] == [i % 4 for i in range(12)]
    loader = torch.utils.data.DataLoader(TableIterableDataset(f"tar:{tmp_path}/s-%04d.tar", type="sample",
                                                              decode=True), batch_size=4, collate_fn=collate)
    first = next(iter(loader))
    assert first["cls"].tolist() == [0, 1, 2, 3] and first["jpg"][1] == b"\x01" * 3
    by_index = TableDataset(f"tar:{tmp_path}/s-%04d.tar", type="sample", decode=True)
    assert len(by_index) == 12 and by_index[7]["cls"] == 3
