"""threads= in Python: the same entries, bytes and errors as one thread."""
import pytest

np = pytest.importorskip("numpy")
tablio = pytest.importorskip("tablio")


def test_threads_give_the_same_entries_bytes_and_errors(tmp_path):
    rng = np.random.default_rng(3)
    values = {f"{i:08d}": rng.normal(size=(1 + i % 4, 5)).astype(np.float32) for i in range(400)}
    for threads in (1, 3):
        with tablio.writer(f"tfrecord:{tmp_path}/m{threads}.tfrecord", type="matrix", threads=threads) as w:
            for key, value in values.items():
                w[key] = value
        with tablio.writer(f"ark:{tmp_path}/c{threads}.ark", type="matrix", compression_method=2,
                           threads=threads) as w:
            for key, value in values.items():
                w[key] = value
    for name in ("m%d.tfrecord", "c%d.ark"):
        assert (tmp_path / (name % 1)).read_bytes() == (tmp_path / (name % 3)).read_bytes()
    read = dict(tablio.open(f"tfrecord:{tmp_path}/m1.tfrecord", type="matrix", threads=2))
    assert list(read) == list(values) and all(np.array_equal(read[k], values[k]) for k in values)
    # An error where one thread meets it, after the same entries.
    data = (tmp_path / "m1.tfrecord").read_bytes()
    half = len(data) // 2
    (tmp_path / "cut.tfrecord").write_bytes(data[:half] + bytes([data[half] ^ 1]) + data[half + 1:])
    seen = {}
    for threads in (None, 4):
        keys = []
        with pytest.raises(tablio.FormatError) as caught:
            for key, _ in tablio.open(f"tfrecord:{tmp_path}/cut.tfrecord", type="matrix", threads=threads):
                keys.append(key)
        seen[threads] = (keys, str(caught.value), caught.value.offset)
    assert seen[None] == seen[4] and len(seen[4][0]) > 100


def test_threads_is_checked():
    for bad in (0, 257, 1.5, True, "2"):
        with pytest.raises(tablio.UsageError, match="threads"):
            tablio.open("ark:x.ark", threads=bad)


@pytest.mark.parametrize("type", ["matrix", "compressed-matrix"])
def test_a_matrix_that_cannot_be_compressed_is_a_usage_error_and_leaves_no_entry(tmp_path, type):
    fine = np.arange(12, dtype=np.float32).reshape(3, 4)
    bad = fine.copy()
    bad[1, 2] = np.nan
    for threads in (None, 2):
        spec = f"ark,scp:{tmp_path}/n{threads}.ark,{tmp_path}/n{threads}.scp"
        w = tablio.writer(spec, type=type, compression_method=2, threads=threads)
        w["a"] = fine
        with pytest.raises(tablio.UsageError, match="NaN") as caught:
            w["b"] = bad
            w["c"] = fine  # with threads, b's error may come here, once a is written...
            w.close()      # ...or here, once c is
        assert "the value of key 'b' for " in str(caught.value)  # with threads or without
        if threads is None:
            w["c"] = fine
        w.close()
        for rspec in (f"ark:{tmp_path}/n{threads}.ark", f"scp:{tmp_path}/n{threads}.scp"):
            assert [k for k, _ in tablio.open(rspec)] == ["a", "c"], (threads, rspec)
