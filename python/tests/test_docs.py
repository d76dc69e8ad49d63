"""Every Python example in docs/python.md runs, in order, in an empty folder; and so do those
of docs/remote.md, against an S3 server on loopback holding the bucket they name."""

import re

from conftest import REPO


def run_examples(guide, at_least, folder, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "docs" / guide).read_text(), re.S)
    assert len(blocks) >= at_least
    monkeypatch.chdir(folder)
    namespace = {}
    for block in blocks:
        exec(compile(block, f"docs/{guide}", "exec"), namespace)


def test_python_guide_examples_run(tmp_path, monkeypatch):
    run_examples("python.md", 5, tmp_path, monkeypatch)


def test_remote_guide_examples_run(s3server, tmp_path, monkeypatch):
    s3server.create_bucket("my-bucket")
    for name, value in s3server.env().items():
        monkeypatch.setenv(name, value)
    run_examples("remote.md", 3, tmp_path, monkeypatch)
