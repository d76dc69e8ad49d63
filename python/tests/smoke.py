"""Imports an installed tablio (not the source tree's) and round-trips a table."""
import os
import sys
import tempfile

import numpy as np

import tablio

expected = os.path.realpath(sys.argv[1])
assert os.path.realpath(tablio.__file__).startswith(expected), (tablio.__file__, expected)
with tempfile.TemporaryDirectory() as folder:
    with tablio.writer(f"ark:{folder}/a.ark") as w:
        w["k"] = np.eye(3, dtype=np.float32)
    [(key, value)] = list(tablio.open(f"ark:{folder}/a.ark"))
    assert key == "k" and np.array_equal(value, np.eye(3))
print("tablio imported from", os.path.dirname(tablio.__file__))
