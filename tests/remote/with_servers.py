#!/usr/bin/env python3
"""Runs a command with nginx and s3rver up on loopback, for the C++ tests of remote objects:

    with_servers.py [--bucket NAME] COMMAND [ARG...]

The command finds nginx's folder in TABLIO_TEST_HTTP_ROOT and its address in
TABLIO_TEST_HTTP_URL, and s3rver through the AWS_* variables, with an empty bucket named in
TABLIO_TEST_BUCKET (NAME, default "tests"). Gives the command's exit status; the servers end
with it, and the command is killed after TABLIO_TEST_TIMEOUT seconds (default 600). Where a
server cannot run here, the command is not run: the exit status is 77, which CTest is told
means skipped (SKIP_RETURN_CODE), unless TABLIO_REQUIRE_SERVERS is set: then it is 1.
"""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import servers  # noqa: E402

SKIPPED = 77


def run(command, extra):
    env = {**os.environ, **extra, "no_proxy": "127.0.0.1,localhost", "NO_PROXY": "127.0.0.1,localhost"}
    try:
        return subprocess.run(command, env=env, timeout=float(os.environ.get("TABLIO_TEST_TIMEOUT", 600))).returncode
    except subprocess.TimeoutExpired as e:
        print(f"with_servers.py: {command[0]} did not end within {e.timeout} s", file=sys.stderr)
        return 1


def main():
    command, bucket = sys.argv[1:], "tests"
    if command[:1] == ["--bucket"] and len(command) > 2:
        bucket, command = command[1], command[2:]
    if not command:
        sys.exit(__doc__)
    reason = servers.why_nginx_cannot_run() or servers.why_s3rver_cannot_run()
    if reason:
        required = bool(os.environ.get("TABLIO_REQUIRE_SERVERS"))
        print(f"with_servers.py: {reason}" + (" (TABLIO_REQUIRE_SERVERS is set)" if required else ": skipped"),
              file=sys.stderr)
        sys.exit(1 if required else SKIPPED)
    with tempfile.TemporaryDirectory(prefix="tablio-servers-") as folder:
        root = Path(folder) / "www"
        root.mkdir()
        with servers.Nginx(root) as nginx, servers.S3Server(Path(folder) / "s3") as s3:
            extra = {"TABLIO_TEST_HTTP_ROOT": str(root), "TABLIO_TEST_HTTP_URL": nginx.url,
                     "TABLIO_TEST_BUCKET": s3.create_bucket(bucket), **s3.env()}
            sys.exit(run(command, extra))


if __name__ == "__main__":
    main()
