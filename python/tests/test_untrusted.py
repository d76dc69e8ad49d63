"""Input from others, as a dataset-ingestion service opens it: shard indexes that name commands
or files outside their folder, scripts that point at secrets and devices, specifiers that name
caches, files that claim far more than they hold, keys that would drive a terminal. The
process-wide policy (tablio.set_untrusted, TABLIO_UNTRUSTED=1) is set in processes of their own:
it cannot be undone."""

import gzip
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tablio
import tablio.torch as tt
from tablio import shard_index

SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"


def shards(folder, n=2, name="train-%06d.tar"):
    with tablio.writer(f"tar,maxcount=2:{folder}/{name}", type="int32") as w:
        for i in range(2 * n):
            w[f"k{i:03d}"] = i


def command_index(folder, field):
    """An index whose `field` runs a command that leaves PWNED behind."""
    pwned = folder / "PWNED"
    command = f"/usr/bin/id > {pwned}; echo '{{\"shardlist\": []}}' |"
    if field == "source_url":
        desc = {"datasets": [{"source_url": command}]}
    elif field == "url":
        desc = {"shardlist": [{"url": command, "nsamples": 1}]}
    else:
        desc = {"base_path": command, "shardlist": [{"url": "x.tar", "nsamples": 1}]}
    (folder / "up.shardindex.json").write_text(json.dumps(desc))
    return folder / "up.shardindex.json", pwned


@pytest.mark.parametrize("field", ["source_url", "url", "base_path"])
def test_nothing_in_a_shard_index_runs_a_command(tmp_path, field):
    index, pwned = command_index(tmp_path, field)
    for opening in (lambda: shard_index.load(str(index)),
                    lambda: tablio.random_access(f"index:{index}", type="int32", allow_pipes=False,
                                                 allow_network=False),
                    lambda: tablio.random_access(f"index:{index}", type="int32"),
                    lambda: tt.TableDataset(f"index:{index}", type="int32"),
                    lambda: tt.TableIterableDataset(f"index:{index}", type="int32")):
        with pytest.raises(tablio.FormatError, match="never a command|no command"):
            opening()
        assert not pwned.exists()


def test_an_index_planted_beside_shards_runs_nothing(tmp_path):
    shards(tmp_path)
    pwned = tmp_path / "PWNED"
    (tmp_path / "train.shardindex.json").write_text(json.dumps(
        {"datasets": [{"source_url": f"/usr/bin/id > {pwned}; echo '{{\"shardlist\": []}}' |"}]}))
    with pytest.raises(tablio.FormatError):
        tt.TableIterableDataset(f"tar:{tmp_path}/train-%06d.tar", type="int32")
    assert not pwned.exists()
    # The index itself is never a command either, named as "index:CMD |".
    with pytest.raises(tablio.AccessError):
        tablio.random_access(f"index:echo {{}} > {pwned} |", type="int32")
    assert not pwned.exists()


def test_an_index_that_nests_or_counts_past_any_dataset_is_a_format_error(tmp_path):
    path = tmp_path / "deep.shardindex.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(tablio.FormatError, match="RecursionError"):
        shard_index.load(str(path))
    nested = {"shardlist": []}
    for _ in range(50):
        nested = {"datasets": [nested]}
    path.write_text(json.dumps(nested))
    with pytest.raises(tablio.FormatError, match="nested more than"):
        shard_index.load(str(path))
    for field, value in (("nsamples", 10**30), ("filesize", 2**64)):
        entry = {"url": "a.tar", "nsamples": 1, field: value}
        path.write_text(json.dumps({"shardlist": [entry]}))
        with pytest.raises(tablio.FormatError):
            shard_index.load(str(path))
    path.write_text(json.dumps({"name": ["x"], "shardlist": []}))
    with pytest.raises(tablio.FormatError, match="'name' is not a string"):
        shard_index.load(str(path))


def test_an_index_names_one_format_one_extension_and_counts_that_add_up(tmp_path):
    shards(tmp_path)
    pwned = tmp_path / "PWNED"
    for field, value in (("format", f"tar:touch {pwned} |,"), ("format", "scp"), ("value_type", "x,scp:/etc/x"),
                         ("key", f"id,cache={tmp_path}/elsewhere"), ("key", "id:x"), ("key", ["id"])):
        desc = {"shardlist": [{"url": "train-000000.tar", "nsamples": 2}], field: value}
        (tmp_path / "x.json").write_text(json.dumps(desc))
        with pytest.raises(tablio.FormatError, match=f"its '{field}'") as caught:
            shard_index.load(str(tmp_path / "x.json"))
        if field == "key" and isinstance(value, str):  # quoting at most 16 characters of the input
            assert "is no feature name" in str(caught.value)
            assert value[:16] in str(caught.value) and (len(value) <= 16 or value not in str(caught.value))
    assert not pwned.exists()
    for desc in ({"shardlist": [{"url": "a.tar", "nsamples": 2**62 + 1}, {"url": "b.tar", "nsamples": 2**62 + 1}]},
                 {"shardlist": [{"url": "train-000000.tar\u0000.x", "nsamples": 1}]}):
        (tmp_path / "x.json").write_text(json.dumps(desc))
        with pytest.raises(tablio.FormatError):
            shard_index.load(str(tmp_path / "x.json"))


def test_an_untrusted_index_that_lies_about_its_shards_costs_nothing(tmp_path):
    shards(tmp_path, n=3)
    size = os.path.getsize(tmp_path / "train-000000.tar")
    code = f"""
        import tablio, tablio.torch as tt
        tablio.set_untrusted()
        import json
        for samples, size in ((40_000_000, 2**62), (100, {size})):
            path = "{tmp_path}/train.shardindex.json"
            json.dump({{"shardlist": [{{"url": f"train-{{k:06d}}.tar", "nsamples": samples, "filesize": size}}
                                     for k in range(3)]}}, open(path, "w"))
            try:
                tt.TableIterableDataset("tar:{tmp_path}/train-%06d.tar", type="int32")
            except tablio.FormatError as e:
                print("FormatError", str(e)[-80:])
        hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
        print("peak", int(hwm.split()[1]) // 1024, "MiB")
    """
    done = run_python(code)
    assert done.returncode == 0 and done.stdout.count("FormatError") == 2, done.stderr
    assert "more than untrusted input may" in done.stdout and "too few for 100 records" in done.stdout
    assert int(done.stdout.split("peak ")[1].split()[0]) < peak_bound(600), done.stdout


def test_decoded_npz_members_inflate_within_limits(tmp_path):
    import io
    import zipfile
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
        out = io.BytesIO()
        np.save(out, np.zeros(64 << 20, np.uint8))
        z.writestr("zeros.npy", out.getvalue())
    with tablio.writer(f"tar:{tmp_path}/s-%06d.tar", type="sample") as w:
        w["k0"] = {"npz": buffer.getvalue(), "cls": b"1"}
    with pytest.raises(tablio.FormatError, match="past the limits"):
        tablio.load(f"tar:{tmp_path}/s-%06d.tar", type="sample", decode=True, limits={"expansion": 100})
    keys, values = tablio.load(f"tar:{tmp_path}/s-%06d.tar", type="sample", decode=True)  # trusted: no ratio
    assert values[0]["npz"]["zeros"].size == 64 << 20


def test_confine_keeps_every_entry_point_inside_a_folder(tmp_path):
    up = tmp_path / "up"
    up.mkdir()
    (tmp_path / "secret.txt").write_text(f"AWS_SECRET_ACCESS_KEY={SECRET}\n")
    with tablio.writer(f"ark,scp:{up}/a.ark,{up}/a.scp", type="vector") as w:
        w["utt1"] = np.ones(3, np.float32)
    assert len(tablio.load(f"scp:{up}/a.scp", type="vector", confine=up)[0]) == 1
    for target in (tmp_path / "secret.txt", "/proc/self/environ", "/dev/zero", "-", f"{up}/../secret.txt"):
        (up / "bad.scp").write_text(f"utt0 {target}\n")
        with pytest.raises(tablio.AccessError):
            tablio.load(f"scp:{up}/bad.scp", type="vector", confine=up)
    # An index's shards: absolute, "~" and base_path out of the folder (a glob is no shard at all).
    with pytest.raises(tablio.FormatError, match="pattern"):
        (up / "i.shardindex.json").write_text(json.dumps({"shardlist": [{"url": "/etc/*", "nsamples": 1}]}))
        shard_index.load(str(up / "i.shardindex.json"))
    for desc in ({"shardlist": [{"url": str(tmp_path / "secret.txt"), "nsamples": 1}]},
                 {"shardlist": [{"url": "~/.aws/credentials", "nsamples": 1}]},
                 {"base_path": "/etc", "shardlist": [{"url": "passwd", "nsamples": 1}]}):
        (up / "i.shardindex.json").write_text(json.dumps(desc))
        index = f"index:{up}/i.shardindex.json"
        with pytest.raises((tablio.AccessError, FileNotFoundError)):
            tablio.random_access(index, type="bytes", confine=up).at(0)
        with pytest.raises((tablio.AccessError, FileNotFoundError)):
            list(tt.TableIterableDataset(index, type="bytes", confine=up))
    with pytest.raises(tablio.AccessError):
        shard_index.load(str(tmp_path / "secret.txt"), confine=up)
    with pytest.raises(tablio.AccessError):
        tt.expand_shards(f"tar:{tmp_path}/*.txt", confine=up)
    with pytest.raises(tablio.AccessError):
        tablio.idx.read("/etc/passwd", confine=up)


def test_messages_quote_16_bytes_of_the_input(tmp_path):
    (tmp_path / "secret.txt").write_text(f"AWS_SECRET_ACCESS_KEY={SECRET}\n")
    (tmp_path / "s.scp").write_text(f"utt0 {tmp_path}/secret.txt\n")
    with pytest.raises(tablio.FormatError) as caught:
        tablio.load(f"scp:{tmp_path}/s.scp", type="matrix")
    assert "AWS_SECRET_ACCES" in str(caught.value) and SECRET[:4] not in str(caught.value)
    (tmp_path / "s.scp").write_text(f"utt0 {tmp_path}/secret.txt:22\n")  # at the secret itself
    with pytest.raises(tablio.FormatError) as caught:
        tablio.load(f"scp:{tmp_path}/s.scp", type="matrix")
    assert SECRET[:17] not in str(caught.value)


def test_messages_escape_what_reorders_or_breaks_a_line():
    from tablio.errors import excerpt
    assert excerpt("a\u202eb\u061c") == "a\\u202eb\\u061c" and excerpt("c\u2028d\u2029") == "c\\u2028d\\u2029"


def test_a_shard_index_is_quoted_16_bytes_escaped(tmp_path):
    """Names an index holds are input: a message quotes 16 bytes of each, with no raw control byte."""
    shards(tmp_path, n=1)
    long_name = "train-000000.tar" + "\x1b]0;owned\x07" + "x" * 200
    size = os.path.getsize(tmp_path / "train-000000.tar")
    os.rename(tmp_path / "train-000000.tar", tmp_path / long_name)
    (tmp_path / "wrong.json").write_text(json.dumps({"shardlist": [{"url": long_name, "nsamples": 2,
                                                                     "filesize": size + 1}]}))
    (tmp_path / long_name[:-150]).write_text("not JSON")
    (tmp_path / "nested.json").write_text(json.dumps({"datasets": [{"source_url": long_name[:-150]}]}))
    for index, said in (("wrong.json", "the shards changed"), ("nested.json", "not a shard index (JSON)")):
        with pytest.raises(tablio.FormatError) as caught:
            shard_index.load(str(tmp_path / index), confine=str(tmp_path))
        message = str(caught.value)
        assert said in message, message
        assert "\x1b" not in message and "\x07" not in message and "x" * 20 not in message, message
        assert "train-000000.tar..." in message or "train-000000.tar\\x1b" not in message, message


def test_a_script_reading_the_same_bytes_again_and_again_is_bounded(tmp_path):
    with tablio.writer(f"ark:{tmp_path}/m.ark", type="matrix") as w:
        w["m"] = np.ones((64, 64), np.float32)
    (tmp_path / "again.scp").write_text("".join(f"u{i} {tmp_path}/m.ark:2\n" for i in range(50)))
    assert len(tablio.load(f"scp:{tmp_path}/again.scp", type="matrix")[0]) == 50  # trusted: no bound
    with pytest.raises(tablio.FormatError, match="max_table_expansion") as caught:
        tablio.load(f"scp:{tmp_path}/again.scp", type="matrix", limits={"table_expansion": 2})
    assert caught.value.path.endswith("again.scp") and 2 <= int(caught.value.key[1:]) < 10  # a few lines in
    code = f"""
        import tablio
        tablio.set_untrusted()
        try:
            tablio.load("scp:{tmp_path}/again.scp", type="matrix")
        except tablio.FormatError as e:
            print("refused", e.key)
    """
    done = run_python(code)
    assert "refused u" in done.stdout and 4 <= int(done.stdout.split("refused u")[1]) < 10, done.stdout + done.stderr


def test_an_index_names_each_shard_and_index_once_by_any_name(tmp_path):
    shards(tmp_path, n=1)
    (tmp_path / "linked.tar").symlink_to(tmp_path / "train-000000.tar")
    for urls in (["train-000000.tar", "./train-000000.tar"], ["train-000000.tar", ".//train-000000.tar"],
                 ["train-000000.tar", "linked.tar"]):
        (tmp_path / "x.json").write_text(json.dumps({"shardlist": [{"url": u, "nsamples": 2} for u in urls]}))
        with pytest.raises(tablio.FormatError, match="twice"):
            shard_index.load(str(tmp_path / "x.json"))
    (tmp_path / "sub.json").write_text(json.dumps({"shardlist": [{"url": "train-000000.tar", "nsamples": 2}]}))
    (tmp_path / "x.json").write_text(json.dumps({"datasets": [{"source_url": "sub.json"}, {"source_url": "./sub.json"}]}))
    with pytest.raises(tablio.FormatError, match="names the index .* twice"):
        shard_index.load(str(tmp_path / "x.json"))
    # A compressed shard holds no more than it may inflate to: a tiny .gz claiming millions is refused.
    gz = tmp_path / "tiny.tar.gz"
    gz.write_bytes(gzip.compress((tmp_path / "train-000000.tar").read_bytes()))
    (tmp_path / "gz.json").write_text(json.dumps({"shardlist": [{"url": "tiny.tar.gz", "nsamples": 1 << 25}]}))
    with pytest.raises(tablio.FormatError, match="too few for 33554432 records"):
        shard_index.load(str(tmp_path / "gz.json"), confine=str(tmp_path))


def test_keys_with_control_bytes_are_refused_on_reading(tmp_path):
    path = tmp_path / "esc.ark"
    path.write_bytes(b"utt\x1b]0;pwned\x07 \x00B" + b"FV \x04\x00\x00\x00\x00")
    with pytest.raises(tablio.FormatError, match="expected a key") as caught:
        tablio.load(f"ark:{path}", type="vector")
    assert "\x1b" not in str(caught.value) and caught.value.offset == 0
    with pytest.raises(tablio.UsageError) as caught:
        with tablio.writer(f"ark:{tmp_path}/w.ark", type="vector") as w:
            w["bad\x07key"] = np.ones(1, np.float32)
    assert "\x07" not in str(caught.value)


def test_limits_bound_what_a_file_may_make_us_allocate(tmp_path):
    # 768 MiB claimed, 64 MiB of zeros given: compressed a thousand times.
    path = tmp_path / "bomb-idx3-ubyte.gz"
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(bytes([0, 0, 8, 3, 0, 0, 0x30, 0, 0, 0, 1, 0, 0, 0, 1, 0]))
        out.write(bytes(64 << 20))
    with pytest.raises(tablio.FormatError, match="max_expansion"):
        tablio.idx.read(str(path), limits={"expansion": 100})
    with pytest.raises(tablio.FormatError, match="max_total_bytes"):
        tablio.idx.read(str(path), limits={"total_bytes": 1 << 20})
    with pytest.raises(tablio.UsageError, match="limits= takes"):
        tablio.idx.read(str(path), limits={"bytes": 1})
    # One record that claims 1 GiB, in a GZIP TFRecord file of a few MiB.
    record = tmp_path / "big.tfrecord.gz"
    with gzip.open(record, "wb") as out:
        out.write((1 << 30).to_bytes(8, "little"))
        out.write(tablio_masked_crc((1 << 30).to_bytes(8, "little")).to_bytes(4, "little"))
        out.write(bytes(32 << 20))
    with pytest.raises(tablio.FormatError, match="max_record_bytes"):
        tablio.load(f"tfrecord:{record}", type="bytes", limits={"record_bytes": 1 << 24})
    with pytest.raises(tablio.FormatError, match="max_expansion"):  # not a record "truncated"
        tablio.load(f"tfrecord:{record}", type="bytes", limits={"expansion": 100})


def test_memory_follows_what_arrives_not_what_a_header_claims(tmp_path):
    path = tmp_path / "bomb-idx3-ubyte.gz"  # 768 MiB claimed, 64 MiB given (65 KB compressed)
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(bytes([0, 0, 8, 3, 0, 0, 0x30, 0, 0, 0, 1, 0, 0, 0, 1, 0]))
        out.write(bytes(64 << 20))
    code = f"""
        import tablio
        try:
            tablio.idx.read({str(path)!r})
        except tablio.FormatError as e:
            print(type(e).__name__, str(e))
        # VmHWM: this process's own peak (ru_maxrss would keep the parent's, across exec).
        hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
        print("peak", int(hwm.split()[1]) // 1024, "MiB")
    """
    for env, bound, says in (({}, 300, "truncated"), ({"TABLIO_UNTRUSTED": "1"}, 120, "max_expansion")):
        done = run_python(code, env)
        peak = int(done.stdout.split("peak ")[1].split()[0])
        assert says in done.stdout and peak < peak_bound(bound), (done.stdout, done.stderr)


def tablio_masked_crc(data):
    """TFRecord's masked CRC32C of data."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    crc ^= 0xFFFFFFFF
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def peak_bound(mib):
    """A bound on a process's peak memory, doubled under AddressSanitizer (red zones, quarantine)."""
    return mib * 2 if os.environ.get("TABLIO_SANITIZED") else mib


def run_python(code, env=None, timeout=120):
    """Runs code in a Python of its own (the policy lasts as long as its process)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def upload_with_a_command(tmp_path, then=""):
    """An upload folder: a vector table, and a script whose first line runs a command (then `then`)."""
    up = tmp_path / "up"
    up.mkdir()
    with tablio.writer(f"ark,scp:{up}/a.ark,{up}/a.scp", type="vector") as w:
        w["utt1"] = np.ones(3, np.float32)
    pwned = tmp_path / "PWNED"
    (up / "cmd.scp").write_text(f"utt0 touch {pwned} |\n{then}")
    return up, pwned


def test_the_untrusted_policy_holds_for_the_whole_process(tmp_path):
    up, pwned = upload_with_a_command(tmp_path)
    (up / "out.scp").write_text("utt0 /etc/passwd\n")
    # Through a link to the root, a file out there is outside whether or not it exists.
    (up / "root").symlink_to("/")
    (up / "found.scp").write_text(f"utt0 {up}/root/../etc/passwd\n")
    (up / "missing.scp").write_text(f"utt0 {up}/root/../etc/no-such-file-here\n")
    # One object or IDX file named in the upload is confined to its folder as a table is.
    (up / "secret.mat").symlink_to(tmp_path / "outside.mat")
    with tablio.writer(f"ark:{tmp_path}/x.ark", type="matrix") as w:
        w["x"] = np.ones((2, 2), np.float32)
    (tmp_path / "outside.mat").write_bytes((tmp_path / "x.ark").read_bytes()[2:])
    (tmp_path / "outside.idx").write_bytes(b"\0\0\x08\x01\0\0\0\x03" + bytes([1, 2, 3]))
    (up / "secret.idx").symlink_to(tmp_path / "outside.idx")
    code = f"""
        import tablio
        {{setup}}
        print(tablio.process_policy())
        assert len(tablio.load("scp:{up}/a.scp", type="vector")[0]) == 1
        for spec in ("scp:{up}/cmd.scp", "scp:{up}/out.scp", "ark,cache={tmp_path}/c:{up}/a.ark",
                     "scp:{up}/found.scp", "scp:{up}/missing.scp"):
            try:
                tablio.load(spec, type="vector", allow_pipes=True)
                raise SystemExit("opened " + spec)
            except tablio.AccessError:
                pass
        for load in (lambda: tablio.load_object("{up}/secret.mat", type="matrix"),
                     lambda: tablio.idx.read("{up}/secret.idx")):
            try:
                load()
                raise SystemExit("read through a planted link")
            except tablio.AccessError:
                pass
        tablio.set_untrusted(allow_network=True)  # a later call only tightens
        policy = tablio.process_policy()
        assert policy["untrusted"] and not policy["allow_network"], policy
        tablio.set_untrusted(confine="{up}")
        try:
            tablio.set_untrusted(confine="{tmp_path}")
            raise SystemExit("loosened the confining folder")
        except tablio.UsageError:
            pass
        print("ok")
    """
    for setup, env in (("tablio.set_untrusted()", None), ("", {"TABLIO_UNTRUSTED": "1"})):
        done = run_python(code.replace("{setup}", setup), env)
        assert done.returncode == 0 and "ok" in done.stdout, done.stderr
        assert not pwned.exists() and not (tmp_path / "c").exists()


@pytest.mark.worker_processes
def test_the_policy_reaches_dataloader_workers_started_by_spawn_and_forkserver(tmp_path):
    up, pwned = upload_with_a_command(tmp_path, f"utt1 {tmp_path}/up/a.ark:5\n")
    code = f"""
        import tablio, tablio.torch as tt, torch.utils.data
        tablio.set_untrusted()
        for context in ("spawn", "forkserver"):
            for dataset in (tt.TableDataset("scp:{up}/cmd.scp", type="vector"),
                            tt.TableIterableDataset("scp:{up}/cmd.scp", type="vector")):
                loader = torch.utils.data.DataLoader(dataset, num_workers=1, multiprocessing_context=context,
                                                     batch_size=None)
                try:
                    list(loader)
                    print("read", context, type(dataset).__name__)
                except Exception as e:
                    print("refused", context, type(e).__name__, "commands are refused" in str(e))
    """
    done = run_python(code, timeout=240)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("refused") == 4 and "read" not in done.stdout, done.stdout + done.stderr
    assert not pwned.exists()


def test_an_untrusted_remote_index_or_script_reaches_no_local_file(nginx, tmp_path):
    shards(nginx.root)
    size = os.path.getsize(nginx.root / "train-000000.tar")
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (nginx.root / "a.scp").write_text(f"u1 {secret}\n")
    one = {"url": "train-000000.tar", "nsamples": 2}
    for name, desc in {"absolute": {"shardlist": [{**one, "url": str(nginx.root / "train-000000.tar")}]},
                       "parent": {"shardlist": [{**one, "url": "../www/train-000000.tar"}]},
                       "base": {"base_path": str(nginx.root), "shardlist": [one]},
                       "source": {"datasets": [{"source_url": str(nginx.root / "good.json")}]},
                       "lying": {"shardlist": [{**one, "nsamples": 40_000_000, "filesize": 2**40}]},
                       "good": {"shardlist": [{**one, "filesize": size}]}}.items():
        (nginx.root / f"{name}.json").write_text(json.dumps(desc))
    code = f"""
        import tablio
        from tablio import shard_index
        for name in ("absolute", "parent", "base", "source", "lying", "good"):
            try:
                print(name, "loaded", len(shard_index.load("{nginx.url}/" + name + ".json").shards))
            except tablio.FormatError as e:
                print(name, "refused:", str(e))
        try:
            list(tablio.open("scp:{nginx.url}/a.scp", type="bytes"))
        except tablio.AccessError as e:
            print("scp refused:", str(e))
        except tablio.FormatError:
            print("scp read the local file")  # as bytes, the text is no Kaldi object
    """
    trusted = run_python(code)
    assert trusted.returncode == 0, trusted.stderr
    for name in ("absolute", "parent", "base", "source", "lying", "good"):
        assert f"{name} loaded" in trusted.stdout, trusted.stdout
    assert "scp read the local file" in trusted.stdout
    untrusted = run_python(code, {"TABLIO_UNTRUSTED": "network"})
    assert untrusted.returncode == 0, untrusted.stderr
    lines = dict(line.split(" ", 1) for line in untrusted.stdout.splitlines())
    for name in ("absolute", "parent", "base", "source"):
        assert lines[name].startswith("refused:") and "names a local file or leaves the index's folder" in lines[name]
    assert "its shard index" in lines["lying"] and "says 1099511627776" in lines["lying"]
    assert lines["good"] == "loaded 1"
    assert lines["scp"].startswith("refused:") and "name no local file" in lines["scp"] and SECRET not in untrusted.stdout


def test_a_remote_index_reaches_no_local_file_by_any_scheme(nginx, tmp_path):
    shards(nginx.root)
    workdir = tmp_path / "work"
    (workdir / "file:").mkdir(parents=True)  # where "file://..." would resolve, read as a local path
    one = {"url": "train-000000.tar", "nsamples": 2}
    for name, desc in {"file": {"shardlist": [{**one, "url": "file://../../www/train-000000.tar"}]},
                       "scheme": {"shardlist": [{**one, "url": "x://a/../../../www/train-000000.tar"}]},
                       "base": {"base_path": "file://x", "shardlist": [one]},
                       "encoded": {"shardlist": [{**one, "url": "%2e%2e/www/train-000000.tar"}]}}.items():
        (nginx.root / f"{name}.json").write_text(json.dumps(desc))
    code = f"""
        import tablio
        from tablio import shard_index
        for name in ("file", "scheme", "base", "encoded"):
            try:
                shard_index.load("{nginx.url}/" + name + ".json")
                print(name, "loaded")
            except tablio.FormatError as e:
                print(name, "refused")
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          cwd=workdir, env={**os.environ, "TABLIO_UNTRUSTED": "network"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["file", "refused", "scheme", "refused", "base", "refused", "encoded", "refused"]


def test_an_idx_file_numpy_cannot_shape_is_a_format_error(tmp_path):
    many = tmp_path / "many-idx"
    many.write_bytes(bytes([0, 0, 8, 255]) + (1).to_bytes(4, "big") * 255 + b"\x07")
    huge = tmp_path / "huge-idx"
    huge.write_bytes(bytes([0, 0, 8, 3]) + bytes(4) + b"\xff" * 8)
    for path in (many, huge):
        with pytest.raises(tablio.FormatError, match="numpy can hold"):
            tablio.idx.read(str(path))


def test_a_remote_index_url_that_climbs_out_encoded_is_refused():
    from tablio.shard_index import _escapes
    assert _escapes("../a.tar") and _escapes("%2e%2e/a.tar") and _escapes("%2E%2E%2Fsecret/a.tar")
    assert not _escapes("a/b.tar") and not _escapes("a..b.tar")
