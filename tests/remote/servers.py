"""Real servers on loopback for the tests and benchmarks of remote storage (http(s):// and
s3:// names): nginx serving a folder, s3rver as S3, and a proxy that injects faults between
a client and either of them. Each is a context manager that picks a free port on 127.0.0.1,
returns once the server answers, and on exit (exceptions included) ends what it started.

What s3rver (3.7.1) checks, read from its lib/middleware/authentication.js and tried:
- A request without any Authorization is served, anonymously.
- SigV4 (AWS4-HMAC-SHA256) signatures are never verified: it checks only that the header
  has Credential, SignedHeaders and Signature, that the access key exists (else 403
  InvalidAccessKeyId), that x-amz-content-sha256 is present and well formed, and that
  x-amz-date is within 15 minutes. The payload hash is not checked either.
- Only SigV2 signatures are verified; --allow-mismatched-signatures turns that off too, so
  it changes nothing for SigV4 clients.
So a test of signing must check signatures itself: send the requests through FaultProxy,
which records them, and compare each Authorization with expected_sigv4_authorization().

Conditional requests and objects that change: s3rver ignores If-Match and If-Range on GET
(it answers with the current object, 206 to a Range, whatever the ETag; If-None-Match and
If-Modified-Since do give 304), and it writes an object over its file in place, so that a
GET under way when the object is uploaded again goes on with the new bytes. nginx answers
a failed If-Match with 412 (and closes that connection, though it said keep-alive) and a
failed If-Range with the whole file (200); a response under way keeps the file it opened
when another is os.replace()d over it.

Host: s3rver takes the bucket from the path when the Host is an IP address, localhost or the
machine's name, and otherwise from the Host (virtual-hosted style; a Host such as
proxy.test:80 makes "proxy.test" the bucket). Its port is ignored. Clients therefore use
http://127.0.0.1:PORT of s3rver or of the proxy as endpoint, and the proxy forwards the Host
as the client sent and signed it.
"""

import contextlib
import fcntl
import http.client
import http.server
import importlib.util
import inspect
import itertools
import json
import os
import re
import select
import shutil
import signal
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
S3RVER_VERSION = "3.7.1"
AWS_CLI = os.environ.get("TABLIO_AWS_CLI", "/usr/bin/aws")  # Debian's awscli v2, not a pip one
START_TIMEOUT = 30.0  # seconds a server has to answer after it is started
STOP_TIMEOUT = 5.0  # seconds a server has to end after SIGTERM before SIGKILL
POLL = 0.02  # seconds between readiness checks


def _poll(check, timeout, what):
    """check()'s first true result, polled until `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while not (result := check()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout} s")
        time.sleep(POLL)
    return result


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env(extra=None):
    """os.environ, with `extra`, for the processes tests start: without what a sanitized build
    preloads into the test interpreter (with ASan's runtime preloaded, curl hangs), and
    reaching loopback without any proxy the environment names."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "PYTHONMALLOC")}
    return {**env, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost", **(extra or {})}


def _tail(path, size=4000):
    with contextlib.suppress(OSError):
        return Path(path).read_bytes()[-size:].decode(errors="replace")
    return ""


def _end(proc):
    """Ends proc's whole process group: SIGTERM, then SIGKILL if it lingers."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(STOP_TIMEOUT)
            return
        except subprocess.TimeoutExpired:
            pass


@contextlib.contextmanager
def _running(argv, log, what, ready):
    """Runs argv in a process group of its own, output to the file `log`, and yields
    ready(proc)'s first true result; the group is ended on exit."""
    with open(log, "ab") as out:
        proc = subprocess.Popen([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True, env=child_env())

    def check():
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode}:\n{_tail(log)}")
        return ready(proc)

    try:
        try:
            result = _poll(check, START_TIMEOUT, f"{what} did not start")
        except TimeoutError as e:
            raise TimeoutError(f"{e}\n{_tail(log)}") from None
        yield result
    finally:
        _end(proc)


class _Service:
    """A context manager whose _start(stack) starts things and registers their ends on stack,
    so that a failed start ends what it had started, and __exit__ ends everything."""

    def __enter__(self):
        with contextlib.ExitStack() as stack:
            self._start(stack)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc):
        self._stack.close()

    def _start(self, stack):
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------
# nginx


@dataclass(frozen=True)
class AccessLogEntry:
    """One request as nginx logged it, once its response was sent."""
    method: str
    path: str  # with the query, as the client sent it
    range: str | None  # the Range header
    status: int
    bytes_sent: int  # body bytes only ($body_bytes_sent), fewer than asked when cut short
    connection: int  # nginx's number for the connection
    connection_requests: int  # 1 for a connection's first request, 2 for a reused one's...
    host: str | None  # the Host header


_LOG_FORMAT = "\\t".join(["$request_method", "$request_uri", "$http_range", "$status",
                         "$body_bytes_sent", "$connection", "$connection_requests", "$http_host"])


def _self_signed_certificate(folder):
    """A certificate for 127.0.0.1 and its key: the certificate is its own CA."""
    cert, key = Path(folder) / "cert.pem", Path(folder) / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "7", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key, "-out", cert],
                   check=True, capture_output=True, timeout=60, env=child_env())
    return cert, key


class Nginx(_Service):
    """nginx serving the folder `root` as it serves static files: byte ranges (multipart ones
    too), keep-alive, ETag and Last-Modified. It runs as one process (master_process off)
    under the current user, with its configuration, pid, logs and temporary files in a
    folder of its own, so that it needs nothing of /etc/nginx or /var.

    .url is http://127.0.0.1:PORT (https:// with tls=True, with a self-signed certificate
    for 127.0.0.1 in .ca_file, e.g. for CURL_CA_BUNDLE); .requests() reads its access log."""

    def __init__(self, root, tls=False):
        self.root = Path(root).resolve()
        self.tls = tls
        self.url = self.ca_file = None

    def _start(self, stack):
        prefix = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tablio-nginx-")))
        self._access_log = prefix / "access.log"
        key = None
        if self.tls:
            self.ca_file, key = _self_signed_certificate(prefix)
        # nginx binds the port itself: a port found free may be taken before it does, rarely;
        # it then exits saying so, and another port is tried.
        for attempt in range(3):
            port = _free_port()
            (prefix / "nginx.conf").write_text(self._config(prefix, port, key))
            argv = ["/usr/sbin/nginx", "-p", f"{prefix}/", "-c", "nginx.conf", "-e", "error.log"]
            (prefix / "error.log").unlink(missing_ok=True)  # so that only this attempt's is read
            pid_file = prefix / "nginx.pid"
            try:
                # Ready once it has written its pid file, which it does after binding its port.
                stack.enter_context(_running(
                    argv, prefix / "error.log", "nginx",
                    lambda proc: pid_file.is_file() and pid_file.read_text().strip() == str(proc.pid)))
                break
            except RuntimeError as e:
                if "Address already in use" not in str(e) or attempt == 2:
                    raise
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{port}"

    def _config(self, prefix, port, key):
        tls = f"""ssl;
        ssl_certificate "{self.ca_file}";
        ssl_certificate_key "{key}";""" if self.tls else ";"
        temp = "\n    ".join(f'{kind}_temp_path "{prefix}/{kind}";'
                             for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""daemon off;
master_process off;
worker_processes 1;
pid "{prefix}/nginx.pid";
lock_file "{prefix}/nginx.lock";
error_log "{prefix}/error.log" warn;
events {{ worker_connections 512; }}
http {{
    {temp}
    default_type application/octet-stream;
    sendfile on;
    keepalive_timeout 75s;
    keepalive_requests 100000;
    log_format tablio "{_LOG_FORMAT}";
    access_log "{prefix}/access.log" tablio;
    server {{
        listen 127.0.0.1:{port} {tls}
        root "{self.root}";
    }}
}}
"""

    def requests(self, count=0, timeout=5.0):
        """The requests nginx has logged, oldest first. nginx logs a request after its response
        is sent, so a client may hold a response whose entry is not written yet: this waits
        up to `timeout` seconds for at least `count` entries (returning what there is then)."""
        def read():
            lines = self._access_log.read_text().splitlines() if self._access_log.exists() else []
            return [AccessLogEntry(method, uri, None if rng == "-" else rng, int(status), int(sent),
                                   int(conn), int(n), None if host == "-" else host)
                    for method, uri, rng, status, sent, conn, n, host in
                    (line.split("\t") for line in lines)]
        deadline = time.monotonic() + timeout
        while len(entries := read()) < count and time.monotonic() < deadline:
            time.sleep(POLL)
        return entries


# ---------------------------------------------------------------------------------------------
# s3rver


def why_nginx_cannot_run():
    """None where Nginx() can start, else why not."""
    if not os.access("/usr/sbin/nginx", os.X_OK):
        return "nginx is not installed (/usr/sbin/nginx; Debian's nginx-light has it)"
    return None


def why_s3rver_cannot_run():
    """None where S3Server() can start (installing s3rver first if it must), else why not."""
    if importlib.util.find_spec("boto3") is None:
        return "boto3 is needed to talk to s3rver (Debian: python3-boto3)"
    if shutil.which("node") is None:
        return "node is not installed: s3rver runs on it"
    try:
        install_s3rver()
    except (OSError, RuntimeError, TimeoutError) as e:
        return f"s3rver is not installed and npm could not install it: {e}"
    return None


def install_s3rver(folder=None):
    """s3rver's CLI script, installed by npm into `folder` (default: $TABLIO_S3RVER_DIR, else
    <repo>/build/s3rver) unless a 3.7.1 is there already. A lock keeps concurrent test
    processes from installing at once."""
    folder = Path(folder or os.environ.get("TABLIO_S3RVER_DIR") or REPO / "build" / "s3rver")
    package = folder / "node_modules" / "s3rver"

    def installed():
        manifest = package / "package.json"
        return manifest.is_file() and json.loads(manifest.read_text()).get("version") == S3RVER_VERSION

    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed():
            npm = shutil.which("npm")
            if npm is None:
                raise RuntimeError("npm is needed to install s3rver")
            # --prefix: else npm installs into the first folder above with a node_modules.
            try:
                done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", folder,
                                       f"s3rver@{S3RVER_VERSION}"],
                                      cwd=folder, capture_output=True, text=True, timeout=300,
                                      env=child_env())
            except subprocess.TimeoutExpired as e:
                raise RuntimeError(f"npm did not install s3rver within {e.timeout} s") from None
            if done.returncode != 0 or not installed():
                raise RuntimeError(f"npm could not install s3rver {S3RVER_VERSION} into "
                                   f"{folder}:\n{done.stdout}{done.stderr}")
    return package / "bin" / "s3rver.js"


class S3Server(_Service):
    """s3rver, an S3 in node, keeping its buckets in `data_dir` (they outlive it).

    It listens on a port it picks itself (-p 0) and prints; .endpoint is
    http://127.0.0.1:PORT. .env() is an environment for clients (tablio's, the aws CLI's);
    .client() a boto3 client; .aws(...) runs the aws CLI. None of them sees ~/.aws."""

    access_key = secret_key = "S3RVER"  # s3rver's built-in account
    region = "us-east-1"

    def __init__(self, data_dir):
        self.data_dir = Path(data_dir)
        self.endpoint = None

    def _start(self, stack):
        node = shutil.which("node")
        if node is None:
            raise RuntimeError("node is needed to run s3rver")
        script = install_s3rver()
        self._home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tablio-s3rver-")))
        for name in ("config", "credentials"):
            (self._home / name).touch()
        log = self._home / "s3rver.log"
        # s3rver's ListObjectsV2 continuation tokens are DES-encrypted, which node's OpenSSL 3
        # offers only from its legacy provider: without it, every second page is a 500.
        argv = [node, "--openssl-legacy-provider", script, "-d", self.data_dir, "-a", "127.0.0.1", "-p", "0",
                "--silent"]
        # It prints the port it listens on even when --silent.
        listening = stack.enter_context(_running(
            argv, log, "s3rver", lambda proc: re.search(r"S3rver listening on [\d.]+:(\d+)", _tail(log))))
        self.endpoint = f"http://127.0.0.1:{listening.group(1)}"

    def env(self, endpoint=None):
        """The environment variables that point a client at this server (or at `endpoint`, e.g.
        a FaultProxy's url) with its credentials, and at empty config files."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_REGION": self.region,
            "AWS_DEFAULT_REGION": self.region,
            "AWS_ENDPOINT_URL": endpoint or self.endpoint,
            "AWS_CONFIG_FILE": str(self._home / "config"),
            "AWS_SHARED_CREDENTIALS_FILE": str(self._home / "credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",  # no waiting for an instance-metadata service
        }

    def client(self, endpoint=None, **config):
        """A boto3 S3 client of this server (or of `endpoint`), path-style, bounded in time and
        not retrying unless `config` (botocore Config arguments) says otherwise."""
        import boto3
        import botocore.config
        import botocore.configprovider
        import botocore.session

        # No setting from the environment (AWS_PROFILE, AWS_CA_BUNDLE...) or from ~/.aws.
        session = botocore.session.Session(session_vars={
            name: (config, None, default, convert) for name, (config, _, default, convert)
            in botocore.configprovider.BOTOCORE_DEFAUT_SESSION_VARIABLES.items()})
        session.set_config_variable("config_file", str(self._home / "config"))
        session.set_config_variable("credentials_file", str(self._home / "credentials"))
        settings = dict(signature_version="s3v4", s3={"addressing_style": "path"}, proxies={},
                        connect_timeout=10, read_timeout=60, retries={"total_max_attempts": 1})
        return boto3.session.Session(
            botocore_session=session, aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key, region_name=self.region,
        ).client("s3", endpoint_url=endpoint or self.endpoint,
                 config=botocore.config.Config(**{**settings, **config}))

    def create_bucket(self, name):
        self.client().create_bucket(Bucket=name)
        return name

    def aws(self, *args, endpoint=None, timeout=120):
        """Runs `aws --endpoint-url ENDPOINT *args` (awscli v2) and returns its completed process;
        a failure raises with its output."""
        env = {k: v for k, v in child_env().items() if not k.startswith("AWS_")}
        env.update(self.env(endpoint), AWS_PAGER="")
        done = subprocess.run([AWS_CLI, "--endpoint-url", endpoint or self.endpoint, *map(str, args)],
                              env=env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"aws {' '.join(map(str, args))} failed with status "
                               f"{done.returncode}:\n{done.stdout}{done.stderr}")
        return done


# ---------------------------------------------------------------------------------------------
# The fault-injecting proxy

RECORD_LIMIT = 1 << 20  # request bodies up to this many bytes are kept in the records
BLOCK = 1 << 16
IDLE_TIMEOUT = 60.0  # seconds a client or upstream connection may stay silent mid-exchange
# Headers about one connection, not the message; the proxy frames bodies itself.
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
              "transfer-encoding", "expect"}


@dataclass
class Request:
    """A request the proxy received, as the client sent it, and what the proxy answered."""
    connection: int  # the proxy's number for the client's connection: equal ones reused it
    method: str
    target: str  # path and query, as sent
    headers: list[tuple[str, str]]  # in order, names as sent
    body: bytes | None = b""  # None once longer than RECORD_LIMIT
    body_length: int = 0
    status: int | None = None  # None if the connection was dropped before a status was sent
    faults: list = field(default_factory=list)  # the faults applied to it

    @property
    def path(self):
        return self.target.partition("?")[0]

    @property
    def query(self):
        return self.target.partition("?")[2]

    def header(self, name, default=None):
        """The first value of header `name` (any case)."""
        return next((v for k, v in self.headers if k.lower() == name.lower()), default)


@dataclass(kw_only=True, eq=False)
class Fault:
    """Which requests a fault applies to: those with this `method`, this `path` (without the
    query) and for which `when(request)` is true (None matches any), the first `times` of
    them (None: all). `hits` counts the requests it was applied to. Faults that act after
    K response body bytes do nothing to a response that ends before."""
    method: str | None = None
    path: str | None = None
    when: Callable[[Request], bool] | None = None
    times: int | None = None
    hits: int = field(default=0, init=False)

    def _matches(self, request):
        return ((self.times is None or self.hits < self.times)
                and self.method in (None, request.method)
                and self.path in (None, request.path)
                and (self.when is None or self.when(request)))


@dataclass(eq=False)
class Latency(Fault):
    """Waits `seconds` before forwarding the request."""
    seconds: float


@dataclass(eq=False)
class Status(Fault):
    """Answers `status` (with Retry-After: retry_after if given) instead of forwarding."""
    status: int
    retry_after: int | None = None
    body: bytes = b""


@dataclass(eq=False)
class Reset(Fault):
    """Resets the connection (TCP RST) after `after` response body bytes, once the client has
    them; after=None resets it instead of forwarding the request."""
    after: int | None = 0


@dataclass(eq=False)
class Stall(Fault):
    """Sends nothing for `seconds` after `after` response body bytes, then goes on."""
    seconds: float
    after: int = 0


@dataclass(eq=False)
class Drip(Fault):
    """After `after` response body bytes, sends the rest `size` bytes at a time, `every` seconds
    apart: a server that holds a client by sending slowly. (One that asks it to wait for good
    is Status(503, retry_after=60) with no `times`.)"""
    every: float
    after: int = 0
    size: int = 1


@dataclass(eq=False)
class Truncate(Fault):
    """Closes the connection after `after` response body bytes, short of its Content-Length."""
    after: int


@dataclass(eq=False)
class Swap(Fault):
    """Calls `callback()` after `after` response body bytes, then goes on with the response:
    e.g. one that replaces the object being read (os.replace() in nginx's root, a new upload
    to s3rver), so that the next request finds another ETag."""
    callback: Callable[[], object]
    after: int = 0


def _answers(fault):
    """Whether a fault answers the request itself rather than letting it through."""
    return isinstance(fault, Status) or (isinstance(fault, Reset) and fault.after is None)


class Faults:
    """The faults a proxy applies, in the order they were added."""

    def __init__(self):
        self._lock = threading.Lock()
        self._faults = []

    def add(self, fault):
        with self._lock:
            self._faults.append(fault)
        return fault

    def remove(self, fault):
        with self._lock:
            self._faults.remove(fault)

    def clear(self):
        with self._lock:
            self._faults.clear()

    def _take(self, request):
        """The faults to apply to request, counted as applied: every matching one, except
        that of those answering instead of the server only the first added applies."""
        taken = []
        with self._lock:
            for fault in self._faults:
                if fault._matches(request) and not (_answers(fault) and any(map(_answers, taken))):
                    fault.hits += 1
                    taken.append(fault)
        return taken


class _Hangup(Exception):
    """The client connection is to end now (a fault, or the proxy closing)."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive with the client
    timeout = IDLE_TIMEOUT
    # Headers and body go out in separate writes: with Nagle's algorithm the body would wait
    # for the client's delayed ACK (40 ms), a latency no real server adds.
    disable_nagle_algorithm = True

    def setup(self):
        super().setup()
        self.proxy = self.server.proxy
        self.connection_number = self.proxy._opened(self)
        self.upstream = None  # an http.client connection, kept alive across requests
        self.continue_pending = False

    def finish(self):
        self._close_upstream()
        self.proxy._closed(self)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format, *args):
        pass

    def handle_expect_100(self):
        # 100 Continue is sent when the body is wanted, so that an answer made by a fault goes
        # out before the client sends its body, as S3 answers.
        self.continue_pending = True
        return True

    def forward(self):
        request = Request(self.connection_number, self.command, self.path, list(self.headers.items()))
        self.proxy.requests.append(request)
        request.faults = self.proxy.faults._take(request)
        try:
            for fault in request.faults:
                if isinstance(fault, Latency):
                    self._wait(fault.seconds)
            answer = next(filter(_answers, request.faults), None)
            if isinstance(answer, Reset):
                self._reset()
            if isinstance(answer, Status):
                return self._answer(request, answer)
            try:
                response = self._send_upstream(request)
            except (OSError, http.client.HTTPException) as e:
                self._close_upstream()
                self.close_connection = True
                return self._answer(request, Status(502, body=f"upstream: {e!r}\n".encode()))
            self._relay(request, response)
        except (_Hangup, OSError, http.client.HTTPException):
            self._close_upstream()  # mid-response: the rest of it is not wanted
            self.close_connection = True

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = forward

    def _wait(self, seconds):
        if self.proxy._stopping.wait(seconds):
            raise _Hangup

    def _body(self, request):
        """The request body, in blocks as they come (Content-Length or chunked), recorded; a
        client failing to send it is a _Hangup, which tells it from an upstream failure."""
        try:
            if self.continue_pending:
                self.continue_pending = False
                self.send_response_only(100)
                self.end_headers()
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                blocks = self._chunks()
            else:
                blocks = self._counted(int(self.headers.get("Content-Length") or 0))
            for data in blocks:
                request.body_length += len(data)
                if request.body is not None:
                    request.body = request.body + data if request.body_length <= RECORD_LIMIT else None
                yield data
        except (OSError, ValueError) as e:
            raise _Hangup from e

    def _counted(self, remaining):
        while remaining:
            data = self.rfile.read1(min(BLOCK, remaining))
            if not data:
                raise ConnectionError("the client closed the connection mid-body")
            remaining -= len(data)
            yield data

    def _chunks(self):
        while size := int(self.rfile.readline(1024).split(b";")[0], 16):
            yield from self._counted(size)
            self.rfile.readline(1024)
        while self.rfile.readline(65536) not in (b"\r\n", b"\n", b""):  # trailers, dropped
            pass

    def _answer(self, request, status):
        if (self.headers.get("Content-Length") or self.headers.get("Transfer-Encoding")) \
                and not self.close_connection:
            if self.continue_pending:
                self.close_connection = True  # the client may send the body it was not asked for
            else:
                for _ in self._body(request):  # drained, so that the connection stays usable
                    pass
        request.status = status.status
        body = b"" if self.command == "HEAD" else status.body
        self.send_response(status.status)
        if status.retry_after is not None:
            self.send_header("Retry-After", str(status.retry_after))
        self.send_header("Content-Length", str(len(status.body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def _send_upstream(self, request):
        if self.upstream and self.upstream.sock and select.select([self.upstream.sock], [], [], 0)[0]:
            self._close_upstream()  # closed by the server while idle (s3rver does after 5 s)
        reused = self.upstream is not None
        body = self._body(request)
        try:
            return self._exchange(request, body)
        except (OSError, http.client.HTTPException):
            # A server may close an idle connection just as a request goes out on it: then, as
            # clients do, send it again on a new one if its body is still to be read or was
            # read and recorded whole.
            self._close_upstream()
            state = inspect.getgeneratorstate(body)
            if not reused or state == inspect.GEN_SUSPENDED or request.body is None:
                raise
            return self._exchange(request, body if state == inspect.GEN_CREATED
                                  else [request.body] if request.body else [])

    def _exchange(self, request, body):
        if self.upstream is None:
            self.upstream = self.proxy._connect()
        conn = self.upstream
        conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        if request.header("Host") is None:
            conn.putheader("Host", self.proxy.host or self.proxy._upstream.netloc)
        for name, value in request.headers:
            if name.lower() == "host" and self.proxy.host:
                value = self.proxy.host
            if name.lower() not in HOP_BY_HOP:
                conn.putheader(name, value)
        chunked = "chunked" in self.headers.get("Transfer-Encoding", "").lower()
        if chunked:
            conn.putheader("Transfer-Encoding", "chunked")
        conn.endheaders()
        for data in body:
            conn.send(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
        if chunked:
            conn.send(b"0\r\n\r\n")
        return conn.getresponse()

    def _relay(self, request, response):
        has_body = not (self.command == "HEAD" or response.status in (204, 304) or response.status < 200)
        chunked = has_body and response.getheader("Content-Length") is None
        request.status = response.status
        self.send_response_only(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in HOP_BY_HOP:
                self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        # The faults acting after K body bytes, in the order they act.
        pending = sorted((f for f in request.faults if getattr(f, "after", None) is not None),
                         key=lambda f: f.after)
        sent = 0
        drip = None  # the Drip under way

        def act_due():
            nonlocal drip
            while pending and pending[0].after <= sent:
                fault = pending.pop(0)
                if isinstance(fault, Drip):
                    drip = fault
                else:
                    self._act(fault)

        act_due()
        while has_body and (data := response.read1(BLOCK)):
            while data:
                n = min(len(data), pending[0].after - sent) if pending else len(data)
                if drip:
                    n = min(n, drip.size)
                    self._wait(drip.every)
                self.wfile.write(b"%x\r\n%s\r\n" % (n, data[:n]) if chunked else data[:n])
                sent += n
                data = data[n:]
                act_due()
        response.read()  # nothing is left, but read1() leaves it open and the connection unusable
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _act(self, fault):
        match fault:
            case Reset():
                self._reset()
            case Truncate():
                raise _Hangup  # the connection is closed as usual: FIN, no RST
            case Stall():
                self._wait(fault.seconds)
            case Swap():
                fault.callback()

    def _reset(self):
        # Closing with SO_LINGER 0 sends RST and drops what the kernel has not sent yet, so
        # first wait (boundedly) for the client to have acknowledged every byte written.
        sock = self.connection
        with contextlib.suppress(TimeoutError):
            _poll(lambda: struct.unpack("i", fcntl.ioctl(sock, termios.TIOCOUTQ, b"\0" * 4))[0] == 0,
                  2.0, "unsent bytes")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
        raise _Hangup

    def _close_upstream(self):
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None


class _Server(socketserver.ThreadingTCPServer):
    # socketserver rather than http.server.HTTPServer, whose bind looks the host name up.
    daemon_threads = True
    request_queue_size = 128


class FaultProxy(_Service):
    """An HTTP/1.1 reverse proxy on loopback in front of `upstream_url` (nginx, s3rver,
    http or https, trusting `ca_file` for the latter), applying the faults in .faults.

    Keep-alive on both sides; bodies stream through in 64 KiB blocks, both ways. The Host
    header goes upstream as the client sent it (so that SigV4 signatures of it hold) unless
    `host` is given. Every request is appended to .requests as it arrives (a list, which a
    test may clear). Clients use .url (http://127.0.0.1:PORT) as endpoint."""

    def __init__(self, upstream_url, *, ca_file=None, host=None):
        parts = urllib.parse.urlsplit(upstream_url)
        if parts.scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {upstream_url}")
        self.upstream_url = upstream_url
        self._upstream = parts
        self._context = ssl.create_default_context(cafile=ca_file) if parts.scheme == "https" else None
        self.host = host
        self.faults = Faults()
        self.requests = []
        self.url = None
        self._stopping = threading.Event()
        self._handlers = set()
        self._handlers_lock = threading.Lock()
        self._numbers = itertools.count(1)

    def _connect(self):
        if self._context:
            return http.client.HTTPSConnection(self._upstream.hostname, self._upstream.port or 443,
                                               timeout=IDLE_TIMEOUT, context=self._context)
        return http.client.HTTPConnection(self._upstream.hostname, self._upstream.port or 80,
                                          timeout=IDLE_TIMEOUT)

    def _opened(self, handler):
        with self._handlers_lock:
            self._handlers.add((handler, threading.current_thread()))
            return next(self._numbers)

    def _closed(self, handler):
        with self._handlers_lock:
            self._handlers.discard((handler, threading.current_thread()))

    def _start(self, stack):
        server = _Server(("127.0.0.1", 0), _Handler)
        server.proxy = self
        stack.callback(server.server_close)
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                  name="FaultProxy", daemon=True)
        thread.start()
        stack.callback(self._stop, server, thread)
        self.url = f"http://127.0.0.1:{server.server_address[1]}"

    def _stop(self, server, thread):
        self._stopping.set()  # ends latencies and stalls
        server.shutdown()
        thread.join()
        with self._handlers_lock:
            handlers = list(self._handlers)
        for handler, _ in handlers:  # wakes handlers waiting for a client or for upstream
            for sock in (handler.connection, getattr(handler.upstream, "sock", None)):
                with contextlib.suppress(OSError, AttributeError):
                    sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + STOP_TIMEOUT
        for _, handler_thread in handlers:
            handler_thread.join(max(0.0, deadline - time.monotonic()))


# ---------------------------------------------------------------------------------------------
# SigV4


def expected_sigv4_authorization(request, access_key, secret_key, region, service="s3"):
    """The Authorization header botocore's SigV4 signer computes for a recorded Request: same
    method, path and query, the headers its Authorization names in SignedHeaders with the
    values sent, its x-amz-date, and as payload hash its x-amz-content-sha256 header or else
    the hash of its body. Path and query are put in canonical form (decoded, then encoded
    with RFC 3986's unreserved characters left as they are), as AWS does: a client that signs
    an encoding other than the canonical one gets another signature.

    botocore never signs Expect, User-Agent or X-Amzn-Trace-Id; for a request that signed
    one of them the result differs in SignedHeaders."""
    from botocore.auth import S3SigV4Auth, SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = re.search(r"SignedHeaders=([^,\s]+)", request.header("Authorization", ""))
    timestamp = request.header("X-Amz-Date")
    if not signed or not timestamp:
        raise ValueError("not a SigV4 request signed in its headers: "
                         f"Authorization={request.header('Authorization')!r}, X-Amz-Date={timestamp!r}")
    signed = set(signed.group(1).split(";"))
    path = "/".join(urllib.parse.quote(urllib.parse.unquote(s), safe="") for s in request.path.split("/"))
    params = [(urllib.parse.unquote(k), urllib.parse.unquote(v))
              for k, _, v in (p.partition("=") for p in request.query.split("&") if p)]
    host = request.header("Host", "localhost")
    aws_request = AWSRequest(method=request.method, url=f"http://{host}{path}", params=params, data=request.body)
    for name, value in request.headers:
        if name.lower() in signed or name.lower() == "x-amz-content-sha256":
            aws_request.headers[name] = value
    if request.header("X-Amz-Content-SHA256") is None and request.body is None:
        raise ValueError(f"the body ({request.body_length} bytes) was too long to record and hash")
    aws_request.context["timestamp"] = timestamp
    signer = (S3SigV4Auth if service == "s3" else SigV4Auth)(Credentials(access_key, secret_key),
                                                              service, region)
    signature = signer.signature(signer.string_to_sign(aws_request, signer.canonical_request(aws_request)),
                                 aws_request)
    return (f"AWS4-HMAC-SHA256 Credential={signer.scope(aws_request)}, "
            f"SignedHeaders={signer.signed_headers(signer.headers_to_sign(aws_request))}, "
            f"Signature={signature}")


# ---------------------------------------------------------------------------------------------
# For tests in other languages


def main(argv):
    """servers.py proxy UPSTREAM_URL [FAULT...]: runs a FaultProxy in front of UPSTREAM_URL with
    the faults given as Python expressions of this module's names ("Drip(0.05, method='GET')"),
    prints its url on a line, and ends when its standard input closes: a test (in C++, say)
    stops it by closing that pipe, or by ending."""
    if len(argv) < 2 or argv[0] != "proxy":
        raise SystemExit(main.__doc__)
    with FaultProxy(argv[1]) as proxy:
        for expression in argv[2:]:
            proxy.faults.add(eval(expression, globals()))  # a test's own words, not input
        print(proxy.url, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1:])
