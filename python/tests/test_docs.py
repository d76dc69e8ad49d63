"""Every Python example in the README and docs/python.md runs, in order, in an empty folder;
and so do those of docs/remote.md, against an S3 server on loopback holding the bucket they
name. What the project says of itself in several files agrees: one version, one licence, one
list of packages to install the Python module."""

import json
import re

import pytest

import tablio
from conftest import REPO


def run_examples(guide, at_least, folder, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / guide).read_text(), re.S)
    assert len(blocks) >= at_least
    monkeypatch.chdir(folder)
    namespace = {}
    for block in blocks:
        exec(compile(block, guide, "exec"), namespace)


def test_readme_examples_run(tmp_path, monkeypatch):
    run_examples("README.md", 1, tmp_path, monkeypatch)


def test_python_guide_examples_run(tmp_path, monkeypatch):
    run_examples("docs/python.md", 5, tmp_path, monkeypatch)


def test_pytorch_guide_padding_example_runs(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    guide = (REPO / "docs" / "pytorch.md").read_text()
    section = guide[guide.index("### Features of different lengths"):]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/pytorch.md", "exec"), {})


def test_remote_guide_examples_run(s3server, tmp_path, monkeypatch):
    s3server.create_bucket("my-bucket")
    for name, value in s3server.env().items():
        monkeypatch.setenv(name, value)
    run_examples("docs/remote.md", 3, tmp_path, monkeypatch)


def text(path):
    return (REPO / path).read_text(encoding="utf-8")


def test_one_version_everywhere():
    header = text("include/tablio/core/version.hpp")
    parts = [re.search(rf"#define TABLIO_VERSION_{part} (\d+)", header).group(1) for part in ("MAJOR", "MINOR", "PATCH")]
    version = ".".join(parts)
    assert tablio.__version__ == version
    assert re.search(r"project\(tablio VERSION ([0-9.]+)", text("CMakeLists.txt")).group(1) == version
    assert re.search(r'^version = "([^"]+)"', text("python/pyproject.toml"), re.M).group(1) == version
    assert json.loads(text("ports/tablio/vcpkg.json"))["version"] == version
    assert re.search(r"^## (\S+)", text("CHANGELOG.md"), re.M).group(1) == version
    assert f"Version {version}" in text("README.md")


def test_one_licence_everywhere():
    assert text("LICENSE").startswith("MIT License")
    assert re.search(r'license = \{ text = "([^"]+)" \}', text("python/pyproject.toml")).group(1) == "MIT"
    assert re.search(r'license = "([^"]+)"', text("conanfile.py")).group(1) == "MIT"
    assert json.loads(text("ports/tablio/vcpkg.json"))["license"] == "MIT"
    assert "MIT licence" in text("README.md")
    stated = re.compile(r"\b(Apache|GPL|BSD|MPL)[- ]?\d", re.I)
    for path in ("README.md", "python/README.md", "python/pyproject.toml", "conanfile.py", "ports/tablio/vcpkg.json"):
        assert not stated.search(text(path)), path


def apt_packages(markdown):
    """The packages of the first apt-get install command in a Markdown text's code."""
    command = re.search(r"apt-get install ((?:[^\n]*\\\n)*[^\n]*)", markdown).group(1)
    command = re.sub(r"#[^\n]*", "", command).replace("\\\n", " ")
    return sorted(word for word in command.split() if not word.startswith("-"))


def test_one_list_of_packages_for_the_python_module():
    readme = text("README.md")
    python_part = readme[readme.index("**Python.**"):]
    listed = {
        "README.md": apt_packages(python_part),
        "docs/python.md": apt_packages(text("docs/python.md")),
        "python/README.md": apt_packages(text("python/README.md")),
    }
    assert listed["docs/python.md"] == listed["README.md"] == listed["python/README.md"], listed

