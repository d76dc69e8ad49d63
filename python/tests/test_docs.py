"""Every Python example in docs/python.md runs, in order, in an empty folder."""

import re

from conftest import REPO


def test_python_guide_examples_run(tmp_path, monkeypatch):
    guide = (REPO / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    namespace = {}
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), namespace)
