"""The loopback servers that remote-storage tests run against (tests/remote/servers.py) do
what they say: nginx serves ranges over http and https, s3rver stores what the aws CLI
uploads, each fault of the proxy happens as asked (the proxy runs from the command line too,
for the C++ tests), and the SigV4 check tells a signature that holds from one that does not.
And tablio's deadlines, set in the environment, end a read that such a proxy holds."""

import dataclasses
import http.client
import http.server
import io
import os
import shutil
import socket
import socketserver
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

TIMEOUT = 20  # seconds any one exchange with a server may take

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")


def connect(url):
    parts = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=TIMEOUT)


def get(conn, path, headers=None, method="GET", body=None):
    """(response, body) of one request on a kept-alive connection."""
    conn.request(method, path, body, headers or {})
    response = conn.getresponse()
    return response, response.read()


@pytest.fixture
def curl(remote):
    """curl(*args, env=None): (exit status, HTTP status, body bytes received) of one curl run."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")

    def run(*args, env=None):
        done = subprocess.run(["curl", "-sS", "-o", os.devnull, "-w", "%{http_code} %{size_download}",
                               "--max-time", str(TIMEOUT), *map(str, args)], env=remote.child_env(env),
                              capture_output=True, text=True, timeout=TIMEOUT + 5)
        status, size = done.stdout.split()
        return done.returncode, int(status), int(size)
    return run


@pytest.fixture
def blob(nginx):
    """A 200 kB file of random bytes served by nginx, as its bytes."""
    data = os.urandom(200_000)
    (nginx.root / "blob.bin").write_bytes(data)
    return data


# nginx


def test_nginx_serves_ranges_with_keep_alive_etag_and_last_modified(nginx, blob):
    conn = connect(nginx.url)
    whole, body = get(conn, "/blob.bin")
    assert whole.status == 200 and body == blob
    assert whole.getheader("ETag") and whole.getheader("Last-Modified")
    part, body = get(conn, "/blob.bin", {"Range": "bytes=1000-1999"})
    assert part.status == 206 and body == blob[1000:2000]
    assert part.getheader("Content-Range") == f"bytes 1000-1999/{len(blob)}"
    tail, body = get(conn, "/blob.bin", {"Range": "bytes=-10"})
    assert tail.status == 206 and body == blob[-10:]
    assert get(conn, "/missing")[0].status == 404
    log = nginx.requests(4)
    assert [(e.method, e.path, e.range, e.status, e.bytes_sent) for e in log] == [
        ("GET", "/blob.bin", None, 200, len(blob)), ("GET", "/blob.bin", "bytes=1000-1999", 206, 1000),
        ("GET", "/blob.bin", "bytes=-10", 206, 10), ("GET", "/missing", None, 404, log[3].bytes_sent)]
    assert {e.connection for e in log} == {log[0].connection}  # one kept-alive connection
    assert [e.connection_requests for e in log] == [1, 2, 3, 4]


def test_nginx_answers_conditional_ranges(nginx, blob):
    def status(condition):  # a connection each: nginx closes one after a 412
        return get(connect(nginx.url), "/blob.bin", {"Range": "bytes=0-9", **condition})[0].status

    etag = get(connect(nginx.url), "/blob.bin", method="HEAD")[0].getheader("ETag")
    assert status({"If-Match": etag}) == 206
    assert status({"If-Match": '"other"'}) == 412
    assert status({"If-Range": '"other"'}) == 200  # the whole file


@needs_openssl
def test_nginx_serves_https_with_a_certificate_for_127_0_0_1(remote, nginx, blob, curl):
    with remote.Nginx(nginx.root, tls=True) as server:
        assert server.url.startswith("https://127.0.0.1:")
        request = urllib.request.Request(server.url + "/blob.bin", headers={"Range": "bytes=5-9"})
        trusting = ssl.create_default_context(cafile=server.ca_file)
        with urllib.request.urlopen(request, context=trusting, timeout=TIMEOUT) as response:
            assert response.status == 206 and response.read() == blob[5:10]
        with pytest.raises(urllib.error.URLError) as failure:
            urllib.request.urlopen(request, context=ssl.create_default_context(), timeout=TIMEOUT)
        assert isinstance(failure.value.reason, ssl.SSLCertVerificationError)
        unverified = ssl.create_default_context()
        unverified.check_hostname, unverified.verify_mode = False, ssl.CERT_NONE
        with urllib.request.urlopen(request, context=unverified, timeout=TIMEOUT) as response:
            assert response.read() == blob[5:10]
        # As libcurl finds it.
        trusted = {"CURL_CA_BUNDLE": str(server.ca_file)}
        assert curl(server.url + "/blob.bin", env=trusted) == (0, 200, len(blob))
        assert curl(server.url + "/blob.bin")[0] == 60  # "SSL certificate problem"
        # The proxy in front of it, trusting the same certificate.
        with remote.FaultProxy(server.url, ca_file=server.ca_file) as proxy:
            assert get(connect(proxy.url), "/blob.bin")[1] == blob


def test_nginx_ends_on_exit_even_after_an_exception(remote, nginx):
    with pytest.raises(KeyError):
        with remote.Nginx(nginx.root) as server:
            port = urllib.parse.urlsplit(server.url).port
            socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT).close()
            raise KeyError
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)


# s3rver


def test_s3rver_keeps_what_the_aws_cli_uploads(remote, s3server, tmp_path):
    if not os.access(remote.AWS_CLI, os.X_OK):
        pytest.skip(f"the aws CLI v2 is not installed ({remote.AWS_CLI}; Debian's awscli has it)")
    bucket = s3server.create_bucket("cli-upload")
    data = os.urandom(9 << 20)  # above the CLI's 8 MiB threshold: a multipart upload
    (tmp_path / "up.bin").write_bytes(data)
    s3server.aws("s3", "cp", tmp_path / "up.bin", f"s3://{bucket}/dir/up.bin")
    assert "dir/up.bin" in s3server.aws("s3", "ls", "--recursive", f"s3://{bucket}").stdout
    got = s3server.client().get_object(Bucket=bucket, Key="dir/up.bin")["Body"].read()
    assert got == data
    assert set(s3server.env()) >= {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
                                   "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"}


def test_s3rver_checks_the_access_key_but_not_sigv4_signatures(s3server):
    bucket = s3server.create_bucket("unchecked")
    s3server.client().put_object(Bucket=bucket, Key="k", Body=b"data")

    def status(access_key):
        now = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        headers = {"Authorization": f"AWS4-HMAC-SHA256 Credential={access_key}/{now[:8]}/us-east-1/s3/"
                                    "aws4_request, SignedHeaders=host;x-amz-date, Signature=" + "0" * 64,
                   "x-amz-date": now, "x-amz-content-sha256": "UNSIGNED-PAYLOAD"}
        return get(connect(s3server.endpoint), f"/{bucket}/k", headers)[0].status

    assert status(s3server.access_key) == 200  # a wrong signature passes
    assert status("NOT-A-KEY") == 403


def test_s3rver_ignores_if_match_and_changes_objects_under_a_read(remote, s3server, fault_proxy):
    bucket = s3server.create_bucket("changing")
    s3 = s3server.client()
    size = 32 << 20  # more than loopback's socket buffers hold
    s3.put_object(Bucket=bucket, Key="k", Body=b"o" * size)
    conn = connect(s3server.endpoint)
    assert get(conn, f"/{bucket}/k", {"Range": "bytes=0-9", "If-Match": '"other"'})[0].status == 206
    proxy = fault_proxy(s3server.endpoint)
    proxy.faults.add(remote.Swap(lambda: s3.put_object(Bucket=bucket, Key="k", Body=b"n" * size),
                                 after=1 << 16))
    body = get(connect(proxy.url), f"/{bucket}/k")[1]
    assert len(body) == size and body.startswith(b"o" * (1 << 16)) and body.endswith(b"n")


# The proxy, in front of nginx


def test_proxy_keeps_connections_alive_and_records_requests(nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    conn = connect(proxy.url)
    response, body = get(conn, "/blob.bin", {"Range": "bytes=0-99", "X-Test": "a b"})
    assert response.status == 206 and body == blob[:100]
    get(conn, "/upload?x=1", method="PUT", body=b"0123456789")
    conn.request("POST", "/chunked", body=iter([b"abc", b"defg"]), encode_chunked=True)
    conn.getresponse().read()
    first, put, post = proxy.requests
    assert (first.method, first.target, first.header("x-test"), first.header("range"), first.status) \
        == ("GET", "/blob.bin", "a b", "bytes=0-99", 206)
    assert (put.method, put.path, put.query, put.body, put.body_length, put.status) \
        == ("PUT", "/upload", "x=1", b"0123456789", 10, 405)  # nginx serves files only
    assert post.body == b"abcdefg" and post.header("Transfer-Encoding") == "chunked"
    assert first.connection == put.connection == post.connection
    log = nginx.requests(3)
    assert [e.connection_requests for e in log] == [1, 2, 3]  # kept alive upstream too
    assert {e.host for e in log} == {urllib.parse.urlsplit(proxy.url).netloc}  # Host as sent


def test_proxy_sends_again_a_request_dropped_on_a_kept_alive_connection(remote, fault_proxy):
    """As when s3rver closes a connection idle for 5 s just as a request goes out on it."""
    received = []

    class OneAnswerPerConnection(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        answered = False

        def do_PUT(self):
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            if self.answered:  # a connection's second request: dropped
                self.close_connection = True
                return
            self.answered = True
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    upstream = socketserver.ThreadingTCPServer(("127.0.0.1", 0), OneAnswerPerConnection)
    upstream.daemon_threads = True
    threading.Thread(target=upstream.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        proxy = fault_proxy(f"http://127.0.0.1:{upstream.server_address[1]}")
        conn = connect(proxy.url)
        assert [get(conn, "/", method="PUT", body=body)[0].status for body in (b"a", b"bc")] == [200, 200]
    finally:
        upstream.shutdown()
        upstream.server_close()
    assert received == [b"a", b"bc", b"bc"]
    assert [(r.connection, r.status) for r in proxy.requests] == [(1, 200), (1, 200)]


def test_latency_delays_the_matching_requests(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    (nginx.root / "other.bin").write_bytes(b"x")
    slow = proxy.faults.add(remote.Latency(0.2, path="/blob.bin"))
    conn = connect(proxy.url)
    start = time.monotonic()
    for _ in range(3):
        assert get(conn, "/blob.bin")[1] == blob
    assert time.monotonic() - start >= 0.6
    get(conn, "/other.bin")
    assert slow.hits == 3 and [len(r.faults) for r in proxy.requests] == [1, 1, 1, 0]


def test_reset_after_k_bytes(remote, nginx, blob, fault_proxy, curl):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Reset(70_000, times=1))
    assert curl(proxy.url + "/blob.bin") == (56, 200, 70_000)  # 56: "Connection reset by peer"
    conn = connect(proxy.url)
    proxy.faults.add(remote.Reset(1000, times=1))
    conn.request("GET", "/blob.bin")
    response = conn.getresponse()
    assert response.read(1000) == blob[:1000]
    with pytest.raises(ConnectionResetError):
        response.read()
    assert curl(proxy.url + "/blob.bin") == (0, 200, len(blob))  # times=1: once each


def test_reset_instead_of_forwarding(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Reset(None, times=1))
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        get(connect(proxy.url), "/blob.bin")
    assert get(connect(proxy.url), "/blob.bin")[1] == blob
    assert [r.status for r in proxy.requests] == [None, 200]
    assert len(nginx.requests(1)) == 1  # the first never reached nginx


def test_status_faults_answer_in_place_of_the_server(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Status(503, times=2))
    proxy.faults.add(remote.Status(429, retry_after=3, times=1))
    conn = connect(proxy.url)
    statuses = []
    for _ in range(4):
        response, body = get(conn, "/blob.bin")
        statuses.append((response.status, response.getheader("Retry-After")))
    assert statuses == [(503, None), (503, None), (429, "3"), (200, None)]
    assert body == blob and len({r.connection for r in proxy.requests}) == 1  # still kept alive
    assert len(nginx.requests(1)) == 1


def test_a_status_fault_with_expect_100_continue_answers_before_the_body(remote, nginx, fault_proxy):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Status(503, method="PUT"))
    port = urllib.parse.urlsplit(proxy.url).port
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as s:
        s.sendall(b"PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
        answer = s.makefile("rb").read()  # the proxy closes: the body was never asked for
    assert answer.startswith(b"HTTP/1.1 503 ") and b"Connection: close" in answer
    assert proxy.requests[0].body_length == 0


def test_stall_holds_the_rest_of_the_body(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Stall(0.5, after=50_000, times=1))
    conn = connect(proxy.url)
    start = time.monotonic()
    assert get(conn, "/blob.bin")[1] == blob
    assert time.monotonic() - start >= 0.5
    # A long stall: the first bytes come through at once (the proxy streams), then nothing.
    proxy.faults.add(remote.Stall(60, after=50_000, times=1))
    conn.request("GET", "/blob.bin")
    response = conn.getresponse()
    assert response.read(50_000) == blob[:50_000]
    conn.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):
        response.read(1)


def test_closing_the_proxy_ends_a_stall(remote, nginx, blob):
    with remote.FaultProxy(nginx.url) as proxy:
        proxy.faults.add(remote.Stall(60, after=10))
        conn = connect(proxy.url)
        conn.request("GET", "/blob.bin")
        response = conn.getresponse()
        assert response.read(10) == blob[:10]
        start = time.monotonic()
    assert time.monotonic() - start < remote.STOP_TIMEOUT
    with pytest.raises(http.client.IncompleteRead):
        response.read()


def test_drip_sends_the_rest_a_few_bytes_at_a_time(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    drip = proxy.faults.add(remote.Drip(0.1, after=1000, size=10, times=1))
    conn = connect(proxy.url)
    conn.request("GET", "/blob.bin")
    response = conn.getresponse()
    start = time.monotonic()
    assert response.read(1000) == blob[:1000] and time.monotonic() - start < 0.1  # at once
    assert response.read(30) == blob[1000:1030]  # three drops, 0.1 s apart
    # The first pause may have begun before `start` (up to the 0.1 s checked above): the two
    # after it have not.
    assert 0.2 <= time.monotonic() - start < 1.0
    conn.close()
    assert get(connect(proxy.url), "/blob.bin")[1] == blob and drip.hits == 1


def test_a_status_with_retry_after_and_no_times_asks_to_wait_for_good(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Status(503, retry_after=60))
    conn = connect(proxy.url)
    answers = [get(conn, "/blob.bin", method=method)[0] for method in ("GET", "HEAD", "GET", "GET")]
    assert [(a.status, a.getheader("Retry-After")) for a in answers] == [(503, "60")] * 4
    assert not nginx.requests()


def test_the_proxy_runs_from_the_command_line_until_its_input_closes(remote, nginx, blob):
    """As tests/test_remote.cpp runs it: faults as Python expressions, the url on a line."""
    proxy = subprocess.Popen([sys.executable, remote.__file__, "proxy", nginx.url,
                              "Status(503, times=1)", "Latency(0.2, method='HEAD')"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=remote.child_env())
    try:
        url = proxy.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        conn = connect(url)
        assert get(conn, "/blob.bin")[0].status == 503
        assert get(conn, "/blob.bin")[1] == blob
        start = time.monotonic()
        assert get(conn, "/blob.bin", method="HEAD")[0].status == 200
        assert time.monotonic() - start >= 0.2
        proxy.stdin.close()
        assert proxy.wait(remote.STOP_TIMEOUT) == 0
    finally:
        if proxy.poll() is None:
            proxy.kill()
            proxy.wait()


def test_truncate_closes_short_of_the_content_length(remote, nginx, blob, fault_proxy, curl):
    proxy = fault_proxy(nginx.url)
    proxy.faults.add(remote.Truncate(1234, times=2))
    conn = connect(proxy.url)
    with pytest.raises(http.client.IncompleteRead) as cut:
        get(conn, "/blob.bin")
    assert cut.value.partial == blob[:1234] and cut.value.expected == len(blob) - 1234
    assert curl(proxy.url + "/blob.bin") == (18, 200, 1234)  # 18: "transfer closed with ... remaining"


def test_swap_calls_back_mid_body(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    new = os.urandom(1000)

    def replace():
        (nginx.root / "new.bin").write_bytes(new)
        os.replace(nginx.root / "new.bin", nginx.root / "blob.bin")
        replaced.append(True)

    replaced = []
    swap = proxy.faults.add(remote.Swap(replace, after=100_000, path="/blob.bin", times=1))
    conn = connect(proxy.url)
    conn.request("GET", "/blob.bin")
    old = conn.getresponse()
    assert old.read(100_000) == blob[:100_000]
    assert old.read(1) == blob[100_000:100_001] and replaced == [True]  # called before byte 100 001
    assert old.read() == blob[100_001:]  # nginx goes on with the file it opened
    again, body = get(conn, "/blob.bin")
    assert body == new and again.getheader("ETag") != old.getheader("ETag")
    assert swap.hits == 1


def test_faults_apply_to_matching_requests_only(remote, nginx, blob, fault_proxy):
    proxy = fault_proxy(nginx.url)
    (nginx.root / "other.bin").write_bytes(b"x")
    by_path = proxy.faults.add(remote.Status(503, path="/blob.bin", times=2))
    by_method = proxy.faults.add(remote.Status(500, method="HEAD"))
    by_header = proxy.faults.add(remote.Status(502, when=lambda r: r.header("X-Fail") == "1"))
    conn = connect(proxy.url)
    statuses = [get(conn, path, headers, method)[0].status for method, path, headers in [
        ("GET", "/other.bin", {}), ("GET", "/blob.bin", {}), ("HEAD", "/blob.bin", {}),
        ("GET", "/blob.bin", {}), ("GET", "/blob.bin", {}), ("GET", "/other.bin", {"X-Fail": "1"})]]
    assert statuses == [200, 503, 503, 200, 200, 502]  # one answer per request: the first added
    assert (by_path.hits, by_method.hits, by_header.hits) == (2, 0, 1)
    proxy.faults.clear()
    assert get(conn, "/other.bin", {"X-Fail": "1"}, "HEAD")[0].status == 200


# SigV4, through the proxy in front of s3rver


def with_header(request, name, value):
    """A recorded request with another value of header `name`."""
    headers = [(k, value if k.lower() == name.lower() else v) for k, v in request.headers]
    return dataclasses.replace(request, headers=headers)


def test_sigv4_signatures_of_boto3_requests_check_out(remote, s3server, fault_proxy):
    bucket = s3server.create_bucket("signed")
    proxy = fault_proxy(s3server.endpoint)
    s3 = s3server.client(endpoint=proxy.url)
    key = "dir/a b+c!(1).bin"  # characters a URL encodes
    s3.put_object(Bucket=bucket, Key=key, Body=b"0123456789")
    assert s3.get_object(Bucket=bucket, Key=key, Range="bytes=2-4")["Body"].read() == b"234"
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="dir/")["Contents"]] == [key]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="multi")["UploadId"]
    big = os.urandom(remote.RECORD_LIMIT + 1)  # not recorded: the signed hash header is used
    parts = [s3.upload_part(Bucket=bucket, Key="multi", UploadId=upload, PartNumber=n, Body=body)["ETag"]
             for n, body in [(1, big), (2, io.BytesIO(b"tail"))]]  # a file: boto3 sends Expect
    s3.complete_multipart_upload(Bucket=bucket, Key="multi", UploadId=upload, MultipartUpload={
        "Parts": [{"ETag": etag, "PartNumber": n} for n, etag in enumerate(parts, 1)]})
    assert s3.head_object(Bucket=bucket, Key="multi")["ContentLength"] == len(big) + 4

    requests = proxy.requests
    assert [(r.method, r.query.split("=")[0], r.status) for r in requests] == [
        ("PUT", "", 200), ("GET", "", 206), ("GET", "list-type", 200), ("POST", "uploads", 200),
        ("PUT", "uploadId", 200), ("PUT", "uploadId", 200), ("POST", "uploadId", 200), ("HEAD", "", 200)]
    assert requests[4].body is None and requests[5].header("Expect") == "100-continue"
    credentials = (s3server.access_key, s3server.secret_key, s3server.region)
    for r in requests:
        assert remote.expected_sigv4_authorization(r, *credentials) == r.header("Authorization"), r

    get_range = requests[1]
    for tampered in [
        dataclasses.replace(get_range, method="HEAD"),
        dataclasses.replace(get_range, target=get_range.target.replace("dir", "Dir")),
        dataclasses.replace(requests[2], target=requests[2].target.replace("dir%2F", "dir%2Fx")),
        with_header(get_range, "Range", "bytes=2-5"),
        with_header(get_range, "X-Amz-Date", get_range.header("X-Amz-Date").replace("T", "T0", 1)),
        with_header(requests[0], "X-Amz-Content-SHA256", "0" * 64),
    ]:
        assert remote.expected_sigv4_authorization(tampered, *credentials) \
            != tampered.header("Authorization")
    assert remote.expected_sigv4_authorization(get_range, "S3RVER", "wrong", s3server.region) \
        != get_range.header("Authorization")


def test_sigv4_of_a_body_without_a_hash_header(remote, nginx, fault_proxy):
    botocore_auth = pytest.importorskip("botocore.auth")
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    proxy = fault_proxy(nginx.url)
    # Another service than S3: no x-amz-content-sha256 (the body is hashed), path encoded twice.
    request = AWSRequest("POST", proxy.url + "/a%20b/c?x=1&y=%2F", data=b'{"n": 1}')
    botocore_auth.SigV4Auth(Credentials("AK", "SK"), "execute-api", "eu-west-1").add_auth(request)
    prepared = request.prepare()
    get(connect(proxy.url), prepared.url[len(proxy.url):], dict(prepared.headers), "POST", prepared.body)
    recorded = proxy.requests[0]
    assert recorded.header("X-Amz-Content-SHA256") is None and recorded.body == b'{"n": 1}'

    def check(request):
        return remote.expected_sigv4_authorization(request, "AK", "SK", "eu-west-1", "execute-api")

    assert check(recorded) == recorded.header("Authorization")
    assert check(dataclasses.replace(recorded, body=b'{"n": 2}')) != recorded.header("Authorization")
    with pytest.raises(ValueError, match="too long"):
        check(dataclasses.replace(recorded, body=None))
    with pytest.raises(ValueError, match="not a SigV4 request"):
        check(dataclasses.replace(recorded, headers=[]))


# tablio's deadlines, set in the environment, against the proxy


@pytest.fixture
def tablio_remote():
    """The tablio package, built with remote objects (else the test is skipped)."""
    tablio = pytest.importorskip("tablio")
    try:
        tablio.open("ark:s3://bucket/none", allow_network=False)
    except tablio.UsageError as e:
        if "network access is disabled" not in str(e):
            pytest.skip("this build of tablio has no remote objects (tablio::curl)")
    return tablio


def test_the_environments_deadlines_end_a_read_the_server_holds(tablio_remote, remote, nginx, fault_proxy,
                                                               monkeypatch):
    tablio = tablio_remote
    np = pytest.importorskip("numpy")
    with tablio.writer(f"ark:{nginx.root}/feats.ark") as w:
        for i in range(20):
            w[f"utt{i:02d}"] = np.full((10, 10), i, np.float32)
    monkeypatch.setenv("TABLIO_HTTP_STREAM_DEADLINE", "1.5")
    proxy = fault_proxy(nginx.url)
    url = f"{proxy.url}/feats.ark"
    # A drip: the stream's deadline ends it, as Python's TimeoutError naming the object.
    proxy.faults.add(remote.Drip(0.05, after=2000, method="GET"))
    start = time.monotonic()
    passed = r"\] the stream deadline of 1\.5 s passed at byte 20\d\d of"
    with pytest.raises(TimeoutError, match=passed) as caught:
        tablio.load(f"ark:{url}")
    # libcurl times a transfer in whole milliseconds and can end it a fraction of one early:
    # "passed" is checked to the millisecond.
    assert 1.499 <= time.monotonic() - start < 2.5 and caught.value.filename == url
    # Asked to wait past it: at once.
    proxy.faults.clear()
    proxy.faults.add(remote.Status(503, retry_after=60))
    start = time.monotonic()
    not_waited = r"the 60 s wait the server asks for \(Retry-After\) would pass the stream deadline of 1\.5 s"
    with pytest.raises(TimeoutError, match=not_waited):
        tablio.load(f"ark:{url}")
    assert time.monotonic() - start < 1
