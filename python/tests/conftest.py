import os
import pathlib

import pytest

# The package under test: the build tree's (CTest sets PYTHONPATH), else an installed one.
REPO = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(os.environ.get("TABLIO_TEST_DATA", REPO / "tests" / "data"))


@pytest.fixture
def data():
    return DATA


@pytest.fixture
def in_folder(monkeypatch):
    """Runs the test with a data folder as the current directory (scripts name files
    relative to it, as Kaldi wrote them)."""
    def enter(folder):
        monkeypatch.chdir(DATA / folder)
        return DATA / folder
    return enter
