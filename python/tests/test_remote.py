"""Remote objects (http://, https://, s3://) against real servers on loopback: nginx over http
and https, s3rver as S3, and a proxy between tablio and them that records requests and
injects faults. Every format reads back what was written, byte for byte the same as local
files; faults end in the same bytes or in the documented error; S3 signatures are botocore's."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

import tablio

def remote_support():
    try:
        tablio.open("ark:s3://bucket/none", allow_network=False)
    except tablio.UsageError as e:
        return "network access is disabled" in str(e)
    return True


if not remote_support():
    if os.environ.get("TABLIO_REQUIRE_SERVERS"):
        raise RuntimeError("this build of tablio has no remote objects (tablio::curl), and TABLIO_REQUIRE_SERVERS is set")
    pytest.skip("this build of tablio has no remote objects (tablio::curl)", allow_module_level=True)


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch):
    """Faults retried after short delays, and stalls noticed after a second."""
    monkeypatch.setenv("TABLIO_HTTP_TIMEOUT", "2")
    monkeypatch.setenv("TABLIO_CACHE", "")


def write_tables(folder):
    """Every format, written locally: what the remote copies must equal."""
    rng = np.random.default_rng(3)
    mats = {f"utt{i:03d}": rng.standard_normal((150 + i % 7, 40)).astype(np.float32) for i in range(60)}
    with tablio.writer(f"ark,scp:{folder}/feats.ark,{folder}/feats.scp") as w:
        for k, m in mats.items():
            w[k] = m
    with tablio.writer(f"tfrecord,key=id,scp:{folder}/train.tfrecord,{folder}/train.scp", type="example") as w:
        for i in range(300):
            w[f"r{i:04d}"] = {"image": rng.integers(0, 255, 784, dtype=np.uint8).tobytes(), "label": np.array([i % 10])}
    with tablio.writer(f"tar,maxcount=25:{folder}/shard-%06d.tar", type="int32") as w:
        for i in range(60):
            w[f"s{i:03d}"] = i
    tablio.idx.write(f"{folder}/images-idx3-ubyte", rng.integers(0, 255, (500, 28, 28), dtype=np.uint8))
    return mats


def same(a, b):
    """Two loads (keys, values) are equal."""
    ka, va = a
    kb, vb = b
    if ka != kb:
        return False
    if isinstance(va, np.ndarray):
        return np.array_equal(va, vb)
    if isinstance(va, dict):
        return va.keys() == vb.keys() and all(same(([0], va[k]), ([0], vb[k])) for k in va)
    return all(np.array_equal(x, y) for x, y in zip(va, vb))


def remote_script(folder, name, url):
    """The script `name` with its local paths replaced by url's."""
    text = (folder / name).read_text().replace(str(folder), url)
    out = folder / f"remote-{name}"
    out.write_text(text)
    return out


# ---- http and https

def test_every_format_reads_over_http_as_from_files(nginx, tmp_path):
    folder = nginx.root
    write_tables(folder)
    url = nginx.url
    assert same(tablio.load(f"ark:{url}/feats.ark"), tablio.load(f"ark:{folder}/feats.ark"))
    assert same(tablio.load(f"scp:{remote_script(folder, 'feats.scp', url)}"), tablio.load(f"scp:{folder}/feats.scp"))
    for spec in (f"tfrecord,key=id:{{}}/train.tfrecord", f"scp,key=id:{{}}/train.scp"):
        local = tablio.load(spec.format(folder), type="example")
        if spec.startswith("scp"):
            there = tablio.load(f"scp,key=id:{remote_script(folder, 'train.scp', url)}", type="example")
        else:
            there = tablio.load(spec.format(url), type="example")
        assert same(there, local)
    assert same(tablio.load(f"tar:{url}/shard-%06d.tar", type="int32"),
                tablio.load(f"tar:{folder}/shard-%06d.tar", type="int32"))
    assert same(tablio.load(f"idx:{url}/images-idx3-ubyte", type="bytes"),
                tablio.load(f"idx:{folder}/images-idx3-ubyte", type="bytes"))
    # gzip-compressed tar shards, as WebDataset reads them, by a list and by a brace pattern.
    for i in range(2):
        subprocess.run(f"gzip -c {folder}/shard-{i:06d}.tar > {folder}/shard-{i:06d}.tar.gz", shell=True, check=True)
    assert same(tablio.load(f"tar:{url}/shard-{{000000..000001}}.tar.gz", type="int32"),
                tablio.load(f"tar:{folder}/shard-000000.tar,{folder}/shard-000001.tar", type="int32"))


def test_shards_opened_ahead_give_their_errors_in_turn(nginx):
    write_tables(nginx.root)
    url = nginx.url
    names = f"{url}/shard-000000.tar,{url}/missing.tar,{url}/shard-000001.tar"
    got = []
    with pytest.raises(OSError, match=r"missing\.tar.*404|404.*missing\.tar"):
        for key, value in tablio.open(f"tar:{names}", type="int32"):
            got.append(key)
    assert got == [f"s{i:03d}" for i in range(25)]  # all of the first shard, before the error
    both = tablio.load(f"tar:{url}/shard-000000.tar,{url}/shard-000002.tar", type="int32")
    assert list(both[0]) == [f"s{i:03d}" for i in range(25)] + [f"s{i:03d}" for i in range(50, 60)]


def test_random_access_fetches_ranges_on_kept_alive_connections(nginx):
    folder = nginx.root
    mats = write_tables(folder)
    url = nginx.url
    table = tablio.random_access(f"scp:{remote_script(folder, 'feats.scp', url)}")
    for key in ("utt040", "utt003", "utt059", "utt017"):
        assert np.array_equal(table[key], mats[key])
    gets = [r for r in nginx.requests(count=5) if r.method == "GET"]
    assert gets and all(r.range and r.range.startswith("bytes=") for r in gets)  # ranges, never the file
    assert sum(r.bytes_sent for r in gets) < os.path.getsize(folder / "feats.ark") / 4
    assert max(r.connection_requests for r in nginx.requests()) >= 3  # one connection, kept alive
    # A batch of lookups: its ranges at once, neighbours in one request.
    before = len(nginx.requests(count=5))
    keys = [f"utt{i:03d}" for i in (10, 11, 12, 30, 50)]
    values = table.lookup(keys)
    assert all(np.array_equal(v, mats[k]) for k, v in zip(keys, values))
    batch = nginx.requests(count=before + 3)[before:]  # nginx logs after it responds
    assert len([r for r in batch if r.method == "GET"]) == 3  # 10-12 coalesced, 30, 50
    # IDX items by key: one item's bytes each.
    before = len(nginx.requests(count=before + 3))
    images = tablio.random_access(f"idx:{url}/images-idx3-ubyte", type="bytes")
    assert images["00000123"] == tablio.random_access(f"idx:{folder}/images-idx3-ubyte", type="bytes")["00000123"]
    idx_requests = nginx.requests(count=before + 2)[before:]  # the header, then the item
    assert idx_requests[-1].path.endswith("ubyte") and idx_requests[-1].bytes_sent < 64 * 1024


def test_https_is_verified(remote, tmp_path, monkeypatch):
    (tmp_path / "www").mkdir()
    with tablio.writer(f"ark:{tmp_path}/www/a.ark", type="int32") as w:
        w["k"] = 7
    with remote.Nginx(tmp_path / "www", tls=True) as server:
        with pytest.raises(OSError, match="certificate|SSL"):  # self-signed: refused
            tablio.load(f"ark:{server.url}/a.ark", type="int32")
        monkeypatch.setenv("CURL_CA_BUNDLE", str(server.ca_file))
        assert tablio.load(f"ark:{server.url}/a.ark", type="int32")[0] == ["k"]
        monkeypatch.delenv("CURL_CA_BUNDLE")
        monkeypatch.setenv("SSL_CERT_FILE", str(server.ca_file))
        assert tablio.load(f"ark:{server.url}/a.ark", type="int32")[0] == ["k"]


def test_network_can_be_refused_and_http_is_read_only(nginx):
    with pytest.raises(tablio.UsageError, match="network access is disabled"):
        tablio.open(f"ark:{nginx.url}/a.ark", type="int32", allow_network=False)
    with pytest.raises(tablio.UsageError, match="read-only"):
        tablio.writer(f"ark:{nginx.url}/a.ark", type="int32")
    with pytest.raises(FileNotFoundError, match="HTTP 404 Not Found at byte 0") as caught:
        tablio.load(f"ark:{nginx.url}/missing.ark", type="int32")
    assert caught.value.filename == f"{nginx.url}/missing.ark"


# ---- faults, between tablio and nginx

def etag_of(url):
    with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as answer:
        return answer.headers["ETag"]


def read_through(proxy, folder):
    return tablio.load(f"ark:{proxy.url}/feats.ark")


@pytest.mark.parametrize("fault", ["reset", "503", "truncate", "stall"])
def test_a_fault_mid_read_resumes_at_the_exact_byte(remote, nginx, fault_proxy, fault):
    folder = nginx.root
    write_tables(folder)
    proxy = fault_proxy(nginx.url)
    make = {"reset": lambda: remote.Reset(after=30000, times=1, method="GET"),
            "503": lambda: remote.Status(503, times=2),
            "truncate": lambda: remote.Truncate(after=40000, times=1, method="GET"),
            "stall": lambda: remote.Stall(30, after=20000, times=1, method="GET")}[fault]
    proxy.faults.add(make())
    assert same(read_through(proxy, folder), tablio.load(f"ark:{folder}/feats.ark"))
    if fault == "503":  # asked again
        assert [r.status for r in proxy.requests][:3] == [503, 503, 206]
    else:  # resumed where the broken response stopped, pinned to the same object
        first, second = [r for r in proxy.requests if r.method == "GET"][:2]
        resumed_at = int(second.header("Range")[len("bytes="):].split("-")[0])
        assert 0 < resumed_at < os.path.getsize(folder / "feats.ark")
        assert first.header("If-Match") is None  # the object is learned from this answer
        assert second.header("If-Match") == etag_of(f"{nginx.url}/feats.ark")


def test_429_waits_as_long_as_retry_after_says(remote, nginx, fault_proxy):
    write_tables(nginx.root)
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Status(429, retry_after=1, times=1))
    start = time.monotonic()
    tablio.load(f"ark:{proxy.url}/feats.ark")
    assert time.monotonic() - start >= 1.0


def test_retries_run_out_into_an_error_naming_url_offset_and_status(remote, nginx, fault_proxy, monkeypatch):
    write_tables(nginx.root)
    monkeypatch.setenv("TABLIO_HTTP_RETRIES", "3")
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Status(503))
    with pytest.raises(OSError) as caught:
        tablio.load(f"ark:{proxy.url}/feats.ark")
    message = str(caught.value)
    assert "HTTP 503 Service Unavailable after 3 attempts at byte 0" in message and f"{proxy.url}/feats.ark" in message


def test_faults_spread_over_a_long_read_never_add_up(remote, nginx, fault_proxy, monkeypatch):
    """Every response broken after 30 kB: each attempt moves on, so the retries never run out
    (they count attempts in a row that deliver nothing)."""
    write_tables(nginx.root)
    monkeypatch.setenv("TABLIO_HTTP_RETRIES", "3")
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Reset(after=30000, method="GET"))
    assert same(tablio.load(f"ark:{proxy.url}/feats.ark"), tablio.load(f"ark:{nginx.root}/feats.ark"))
    assert len([r for r in proxy.requests if r.method == "GET"]) > 20


def test_an_object_replaced_mid_read_is_an_error_or_the_first_version_whole(remote, nginx, fault_proxy):
    folder = nginx.root
    write_tables(folder)
    original = (folder / "feats.ark").read_bytes()

    def replace():
        new = folder / "new.ark"
        with tablio.writer(f"ark:{new}") as w:
            w["other"] = np.zeros((3, 3), np.float32)
        os.replace(new, folder / "feats.ark")

    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Swap(replace, after=20000, times=1, method="GET"))
    proxy.faults.add(remote.Reset(after=40000, times=1, method="GET"))  # the rest comes from a new request
    with pytest.raises(OSError, match="changed since it was opened"):
        tablio.load(f"ark:{proxy.url}/feats.ark")
    (folder / "feats.ark").write_bytes(original)


# ---- S3

@pytest.fixture
def bucket(s3server, monkeypatch, request):
    name = "b-" + request.node.name.replace("_", "-").lower()[:50].strip("-")
    s3server.create_bucket(name)
    for k, v in s3server.env().items():
        monkeypatch.setenv(k, v)
    return name


def test_every_format_round_trips_through_s3(s3server, bucket, tmp_path):
    local = tmp_path / "local"
    local.mkdir()
    write_tables(local)
    s3 = f"s3://{bucket}"
    # Written to S3 by tablio: the same bytes as the local files (downloaded by the aws CLI).
    with tablio.writer(f"ark,scp:{s3}/feats.ark,{tmp_path}/feats-s3.scp") as w:
        for k, m in zip(*tablio.load(f"ark:{local}/feats.ark")):
            w[k] = m
    with tablio.writer(f"tfrecord,key=id,scp:{s3}/train.tfrecord,{tmp_path}/train-s3.scp", type="example") as w:
        for k, e in tablio.open(f"tfrecord,key=id:{local}/train.tfrecord", type="example"):
            w[k] = e
    with tablio.writer(f"tar,maxcount=25:{s3}/shard-%06d.tar", type="int32") as w:
        for k, v in tablio.open(f"tar:{local}/shard-%06d.tar", type="int32"):
            w[k] = v
    for out in (s3, local):  # the IDX item count is patched at close, in the first part kept for it
        with tablio.writer(f"idx:{out}/flat-idx2-ubyte", type="bytes") as w:
            for k, v in tablio.open(f"idx:{local}/images-idx3-ubyte", type="bytes"):
                w[k] = v
    for name in ("feats.ark", "train.tfrecord", "shard-000000.tar", "shard-000002.tar", "flat-idx2-ubyte"):
        s3server.aws("s3", "cp", f"{s3}/{name}", str(tmp_path / name))
        assert (tmp_path / name).read_bytes() == (local / name).read_bytes(), name
    # Read back from S3: sequentially, through the scripts into the remote files, by shard pattern.
    assert same(tablio.load(f"ark:{s3}/feats.ark"), tablio.load(f"ark:{local}/feats.ark"))
    assert same(tablio.load(f"scp:{tmp_path}/feats-s3.scp"), tablio.load(f"ark:{local}/feats.ark"))
    assert same(tablio.load(f"scp,key=id:{tmp_path}/train-s3.scp", type="example"),
                tablio.load(f"tfrecord,key=id:{local}/train.tfrecord", type="example"))
    for pattern in ("{}/shard-%06d.tar", "{}/shard-*.tar", "{}/shard-00000[12].tar,{}/shard-000000.tar"):
        there = tablio.load("tar:" + pattern.format(s3, s3), type="int32")
        here = tablio.load("tar:" + pattern.format(local, local), type="int32")
        assert same(there, here), pattern
    assert same(tablio.load(f"idx:{s3}/flat-idx2-ubyte", type="bytes"),
                tablio.load(f"idx:{local}/images-idx3-ubyte", type="bytes"))
    # What the aws CLI uploads, tablio reads.
    s3server.aws("s3", "cp", str(local / "train.tfrecord"), f"{s3}/uploaded.tfrecord")
    assert same(tablio.load(f"tfrecord,key=id:{s3}/uploaded.tfrecord", type="example"),
                tablio.load(f"tfrecord,key=id:{local}/train.tfrecord", type="example"))


def test_large_objects_go_up_in_parts_and_appear_whole(s3server, bucket, tmp_path):
    big = np.arange(6_000_000, dtype=np.float32).reshape(1000, 6000)  # 24 MB: parts of 8 MiB
    with tablio.writer(f"ark:s3://{bucket}/big.ark") as w:
        for i in range(4):
            w[f"k{i}"] = big + i
    with tablio.writer(f"ark:{tmp_path}/big.ark") as w:
        for i in range(4):
            w[f"k{i}"] = big + i
    s3server.aws("s3", "cp", f"s3://{bucket}/big.ark", str(tmp_path / "down.ark"))
    assert (tmp_path / "down.ark").read_bytes() == (tmp_path / "big.ark").read_bytes()


def test_a_writer_given_up_or_killed_leaves_no_object(s3server, bucket, tmp_path):
    client = s3server.client()

    def names():
        return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]

    with pytest.raises(RuntimeError):
        with tablio.writer(f"ark:s3://{bucket}/given-up.ark") as w:
            w["k"] = np.zeros((1000, 4000), np.float32)
            raise RuntimeError("the job failed")
    w = tablio.writer(f"ark:s3://{bucket}/abandoned.ark")
    w["k"] = np.zeros((10, 10), np.float32)
    w.abandon()
    # A writer killed mid-upload (parts already uploaded): no object either.
    script = (f"import numpy as np, sys, tablio\n"
              f"w = tablio.writer('ark:s3://{bucket}/killed.ark')\n"
              f"for i in range(100):\n"
              f"    w[f'k{{i}}'] = np.zeros((1000, 1000), np.float32)\n"
              f"    if i == 30: print('parts', flush=True)\n"
              f"    if i > 30: __import__('time').sleep(0.05)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "parts"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    # A writer never closed, dropped after an exception that Python's collector cannot see:
    # nothing says its table is complete, so the upload is given up, with a warning.
    script = (f"import numpy as np, tablio\n"
              f"w = tablio.writer('ark:s3://{bucket}/dropped.ark')\n"
              f"for i in range(30):\n"
              f"    w[f'k{{i}}'] = np.zeros((100, 1000), np.float32)\n"
              f"raise SystemExit('the job failed')\n")
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "RuntimeWarning" in child.stderr and "dropped without close()" in child.stderr
    assert names() == []


def test_s3_requests_are_signed_as_botocore_signs_them(remote, s3server, bucket, fault_proxy, monkeypatch, tmp_path):
    proxy = fault_proxy(s3server.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "a-session-token")
    big = np.zeros((2000, 2500), np.float32)  # 20 MB: three parts
    with tablio.writer(f"ark:s3://{bucket}/signed.ark") as w:
        for i in range(1):
            w[f"k{i}"] = big
    table = tablio.random_access(f"ark:s3://{bucket}/signed.ark")
    assert table["k0"].shape == big.shape
    with pytest.raises(OSError):
        tablio.load(f"tar:s3://{bucket}/nothing-*.tar", type="int32")
    kinds = set()
    for r in proxy.requests:
        expected = remote.expected_sigv4_authorization(r, s3server.access_key, s3server.secret_key, s3server.region)
        assert r.header("Authorization") == expected, (r.method, r.target)
        assert r.header("x-amz-security-token") == "a-session-token"
        kinds.add((r.method, "uploads" in r.query, "partNumber" in r.query, "uploadId" in r.query,
                   "list-type" in r.query, r.header("Range") is not None))
    assert ("POST", True, False, False, False, False) in kinds  # CreateMultipartUpload
    assert ("PUT", False, True, True, False, False) in kinds    # UploadPart
    assert ("POST", False, False, True, False, False) in kinds  # CompleteMultipartUpload
    assert ("GET", False, False, False, True, False) in kinds   # ListObjectsV2
    assert ("GET", False, False, False, False, True) in kinds   # GET with Range
    assert not any(kind[0] == "HEAD" for kind in kinds)  # an open learns the object from its first GET


def test_no_message_shows_a_credential(s3server, bucket, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "NOSUCHKEYXYZ")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "very-secret-value")
    with pytest.raises(PermissionError) as caught:
        tablio.load(f"ark:s3://{bucket}/x.ark")  # an error answer to a GET
    with pytest.raises(PermissionError) as listed:
        tablio.load(f"tar:s3://{bucket}/x-*.tar")  # a listing: S3's error code too
    for text in (str(caught.value), str(listed.value)):
        assert "HTTP 403 Forbidden" in text and f"s3://{bucket}/x" in text
        assert "very-secret-value" not in text and "NOSUCHKEYXYZ" not in text
    assert "(InvalidAccessKeyId)" in str(listed.value)


def test_half_a_key_pair_or_a_missing_profile_is_refused(s3server, bucket, monkeypatch, tmp_path):
    """As AWS's own tools refuse them: a typo never becomes an anonymous request, or one to
    another endpoint."""
    name = f"ark:s3://{bucket}/x.ark"

    def refused(**env):
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.delenv(k, raising=False) if v is None else m.setenv(k, v)
            with pytest.raises(tablio.UsageError) as caught:
                tablio.load(name)
        assert "very-secret" not in str(caught.value)
        return str(caught.value)

    assert "an access key id without its secret" in refused(AWS_SECRET_ACCESS_KEY=None)
    assert "a secret access key without its id" in refused(AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY="very-secret")
    assert "'nosuch' (AWS_PROFILE)" in refused(AWS_PROFILE="nosuch")
    assert f"AWS_CONFIG_FILE names '{tmp_path}/none'" in refused(AWS_CONFIG_FILE=str(tmp_path / "none"))
    credentials = tmp_path / "credentials"
    credentials.write_text("[half]\naws_access_key_id = AKIDEXAMPLE\n")
    assert "profile 'half' of the credentials file" in refused(
        AWS_ACCESS_KEY_ID=None, AWS_SECRET_ACCESS_KEY=None, AWS_SHARED_CREDENTIALS_FILE=str(credentials),
        AWS_PROFILE="half")


def test_a_presigned_url_is_one_object_and_messages_never_show_its_query(s3server, bucket, tmp_path):
    write_tables(tmp_path)
    client = s3server.client()
    for name in ("train.tfrecord", "shard-000000.tar"):
        client.upload_file(str(tmp_path / name), bucket, f"signed/{name}")

    def presigned(key):
        url = client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key})
        assert "?" in url and "Signature=" in url
        return url

    tfrecord = presigned("signed/train.tfrecord")
    assert same(tablio.load(f"tfrecord,key=id:{tfrecord}", type="example"),
                tablio.load(f"tfrecord,key=id:{tmp_path}/train.tfrecord", type="example"))
    assert same(tablio.load(f"tar:{presigned('signed/shard-000000.tar')}", type="int32"),
                tablio.load(f"tar:{tmp_path}/shard-000000.tar", type="int32"))
    missing = presigned("signed/none.tfrecord")
    with pytest.raises(FileNotFoundError) as caught:
        tablio.load(f"tfrecord:{missing}", type="example")
    assert missing.split("?")[0] in str(caught.value) and "Signature" not in str(caught.value)
    with pytest.raises(tablio.UsageError) as refused:  # where the network is not allowed
        tablio.open(f"tfrecord:{missing}", type="example", allow_network=False)
    assert "network access is disabled" in str(refused.value) and "Signature" not in str(refused.value)


def test_a_bucket_is_no_object_and_missing_numbered_shards_name_their_pattern(s3server, bucket):
    with pytest.raises(tablio.UsageError, match="names a bucket or a folder, not an object"):
        tablio.load(f"tar:s3://{bucket}", type="int32")
    with pytest.raises(FileNotFoundError) as caught:
        tablio.load(f"tar:s3://{bucket}/none-%06d.tar", type="int32")
    assert f"'s3://{bucket}/none-%06d.tar'" in str(caught.value) and "none-000000.tar" in str(caught.value)


def test_numbered_shards_past_a_lost_one_are_an_error_not_the_end(s3server, bucket, nginx):
    # A bucket is listed for shards numbered past the missing one; an http(s) server, which
    # cannot be, is asked for the next number.
    with tablio.writer(f"tar,maxcount=2:s3://{bucket}/lost-%06d.tar", type="int32") as w:
        for i in range(7):
            w[f"k{i}"] = i
    s3server.client().delete_object(Bucket=bucket, Key="lost-000001.tar")
    with pytest.raises(FileNotFoundError) as caught:
        tablio.load(f"tar:s3://{bucket}/lost-%06d.tar", type="int32")
    assert f"('s3://{bucket}/lost-000002.tar' exists)" in str(caught.value)
    assert caught.value.filename == f"s3://{bucket}/lost-000001.tar"
    with tablio.writer(f"tar,maxcount=2:{nginx.root}/lost-%06d.tar", type="int32") as w:
        for i in range(7):
            w[f"k{i}"] = i
    os.remove(f"{nginx.root}/lost-000002.tar")
    with pytest.raises(FileNotFoundError, match=r"\('http://[^']*/lost-000003.tar' exists\)"):
        tablio.load(f"tar:{nginx.url}/lost-%06d.tar", type="int32")


def test_listing_pages_through_more_than_a_thousand_objects(s3server, bucket):
    client = s3server.client()
    for i in range(1003):
        client.put_object(Bucket=bucket, Key=f"many/part-{i:05d}.tar", Body=b"")
    files = tablio._tablio.table_files(f"tar:s3://{bucket}/many/part-*.tar")
    assert len(files) == 1003 and files[-1].endswith("part-01002.tar")


# ---- the cache

def test_the_cache_serves_the_second_read_with_no_request(s3server, bucket, fault_proxy, monkeypatch, tmp_path):
    with tablio.writer(f"tfrecord:s3://{bucket}/c.tfrecord", type="int32") as w:
        for i in range(1000):
            w.append(i)
    proxy = fault_proxy(s3server.endpoint)
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
    cache = tmp_path / "cache"
    first = tablio.load(f"tfrecord,cache={cache}:s3://{bucket}/c.tfrecord", type="int32")
    fetched = len(proxy.requests)
    assert fetched >= 2  # its size, then its bytes
    second = tablio.load(f"tfrecord,cache={cache}:s3://{bucket}/c.tfrecord", type="int32")
    monkeypatch.setenv("TABLIO_CACHE", str(cache))  # the environment's cache too
    third = tablio.random_access(f"tfrecord:s3://{bucket}/c.tfrecord", type="int32")["00000999"]
    assert len(proxy.requests) == fetched and same(first, second) and third == 999
    assert [p.name for p in cache.iterdir() if p.suffix not in (".lock", ".TAG")] == [
        p.name for p in cache.iterdir() if p.name.endswith("-c.tfrecord")]


def test_processes_sharing_a_cache_fetch_each_object_once(s3server, bucket, fault_proxy, tmp_path):
    with tablio.writer(f"ark:s3://{bucket}/shared.ark") as w:
        for i in range(50):
            w[f"k{i}"] = np.full((200, 100), i, np.float32)
    proxy = fault_proxy(s3server.endpoint)
    proxy.faults.add(remote_latency(0.05))
    env = dict(os.environ, **s3server.env(endpoint=proxy.url), TABLIO_CACHE=str(tmp_path / "cache"))
    script = ("import sys, tablio\n"
              f"keys, values = tablio.load('ark:s3://{bucket}/shared.ark')\n"
              "print(len(keys), float(values[49].mean()))\n")
    children = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE, text=True)
                for _ in range(4)]
    outputs = [c.communicate(timeout=120)[0].strip() for c in children]
    assert outputs == ["50 49.0"] * 4
    gets = [r for r in proxy.requests if r.method == "GET"]
    assert len(gets) == 1  # one download, shared by the four


def remote_latency(seconds):
    import tablio_remote_servers as servers  # noqa: (the fixture's module)
    return servers.Latency(seconds)


def test_the_cache_keeps_to_its_limit_without_removing_what_is_open(s3server, bucket, tmp_path):
    for name in ("a", "b", "c"):
        with tablio.writer(f"ark:s3://{bucket}/{name}.ark") as w:
            w["k"] = np.zeros((100, 1000), np.float32)  # 400 KB each
    cache = tmp_path / "cache"
    spec = "ark,cache={},cache_limit=900000:s3://{}/{}.ark"
    held = tablio.open(spec.format(cache, bucket, "a"))  # open: not evicted
    tablio.load(spec.format(cache, bucket, "b"))
    time.sleep(1.1)
    tablio.load(spec.format(cache, bucket, "c"))
    copies = sorted(p.name.split("-", 1)[1] for p in cache.iterdir()
                    if not p.name.endswith(".lock") and p.name != "CACHEDIR.TAG")
    assert "a.ark" in copies and "c.ark" in copies and "b.ark" not in copies
    assert next(held)[0] == "k"


def test_a_remote_lmdb_is_read_through_the_cache(s3server, bucket, tmp_path):
    with tablio.writer(f"lmdb:{tmp_path}/db", type="datum") as w:
        for i in range(20):
            w[f"{i:08d}"] = (np.full((1, 2, 2), i, np.uint8), i)
    s3server.aws("s3", "cp", str(tmp_path / "db" / "data.mdb"), f"s3://{bucket}/db/data.mdb")
    with pytest.raises(tablio.UsageError, match="cache"):
        tablio.load(f"lmdb:s3://{bucket}/db", type="datum")
    keys, (images, labels) = tablio.load(f"lmdb,cache={tmp_path}/cache:s3://{bucket}/db", type="datum")
    assert keys == [f"{i:08d}" for i in range(20)] and labels.tolist() == list(range(20))


# ---- servers that misbehave (written here: nginx and s3rver do not)

class Misbehaving:
    """A tiny HTTP server on loopback whose answers a test chooses: answer(handler) per request."""

    def __init__(self, answer):
        import http.server

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_HEAD(self):
                answer(self)

            def do_GET(self):
                answer(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def reply(handler, status, body=b"", headers=()):
    handler.send_response(status)
    for name, value in headers:
        handler.send_header(name, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(body)


def test_a_server_that_ignores_ranges_or_sends_more_is_refused(tmp_path):
    archive = tmp_path / "a.ark"
    with tablio.writer(f"ark,scp:{archive},{tmp_path}/a.scp", type="int32") as w:
        for i in range(100):
            w[f"k{i:03d}"] = i
    data = archive.read_bytes()

    def whole_object(handler):  # every GET gets the whole object, whatever Range says
        reply(handler, 200, data, [("ETag", '"v1"')])

    def too_much(handler):  # a range answered with more bytes than asked
        start = int(handler.headers.get("Range", "bytes=0-").split("=")[1].split("-")[0])
        body = data[start:] + b"x" * 100 if handler.command == "GET" else data
        reply(handler, 206 if handler.command == "GET" else 200, body,
              [("ETag", '"v1"'), ("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")])

    for answer, error in ((whole_object, "ignores byte ranges"), (too_much, "more than asked")):
        with Misbehaving(answer) as server:
            script = remote_script(tmp_path, "a.scp", server.url)
            with pytest.raises(OSError, match=error):
                tablio.random_access(f"scp:{script}", type="int32")["k050"]


def test_redirects_stay_on_their_scheme_and_are_bounded(nginx):
    (nginx.root / "a.ark").write_bytes(b"")

    def to_other_scheme(handler):
        reply(handler, 301, headers=[("Location", f"ftp://127.0.0.1/a.ark")])

    def forever(handler):
        reply(handler, 302, headers=[("Location", handler.path + "x")])

    def to_nginx(handler):
        reply(handler, 302, headers=[("Location", f"{nginx.url}/a.ark")])

    for answer, error in ((to_other_scheme, "redirect|protocol|Protocol"), (forever, "redirect|Redirect")):
        with Misbehaving(answer) as server, pytest.raises(OSError, match=error):
            tablio.load(f"ark:{server.url}/a.ark", type="int32")
    with Misbehaving(to_nginx) as server:  # http to http: followed
        assert tablio.load(f"ark:{server.url}/a.ark", type="int32")[0] == []


# ---- PyTorch over shards in a bucket

def test_a_streaming_dataset_reads_shards_in_a_bucket(s3server, bucket, tmp_path):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    with tablio.writer(f"tfrecord:s3://{bucket}/train.tfrecord", type="int32") as w:
        for i in range(120):
            w.append(i)
    tablio.shard(f"tfrecord:s3://{bucket}/train.tfrecord", f"tfrecord:s3://{bucket}/train.tfrecord", 4, type="bytes")
    ds = tt.TableIterableDataset(f"tfrecord:s3://{bucket}/train-*-of-00004.tfrecord", type="int32", shuffle=True,
                                 batch_size=16)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    values = sorted(int(v) for batch in loader for v in batch)
    assert values == list(range(120)) and len(loader) == 8
