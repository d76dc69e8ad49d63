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


@pytest.fixture
def every_value_to_threads():
    """Writers with threads hand every value to them (else one this small writes in its own
    thread, as without threads, and the threads' path goes untried)."""
    tablio._tablio._set_thread_use("always")
    yield
    tablio._tablio._set_thread_use("measured")


@pytest.mark.usefixtures("every_value_to_threads")
@pytest.mark.parametrize("type", ["matrix", "compressed-matrix"])
def test_a_matrix_that_cannot_be_compressed_is_a_usage_error_and_leaves_no_entry(tmp_path, type):
    """With threads, a value's error comes from a later write() (which took its own value) or
    from close(): a caller who stops at it, or whose close() raises it, has the table one thread
    leaves to a caller who stops there; one who writes on has every other value written."""
    fine = np.arange(12, dtype=np.float32).reshape(3, 4)
    bad = fine.copy()
    bad[1, 2] = np.nan
    keys = [f"k{i:02d}" for i in range(30)]
    for threads in (None, 2):
        for last in (2, 29):  # the error from close(), or, with threads, from a later write()
            # Stops at the error (the with-block gives the writer up): the entries before it.
            spec = f"ark,scp:{tmp_path}/s{threads}.ark,{tmp_path}/s{threads}.scp"
            with pytest.raises(tablio.UsageError, match="NaN") as caught:
                with tablio.writer(spec, type=type, compression_method=2, threads=threads) as w:
                    for i, key in enumerate(keys[:last + 1]):
                        w[key] = bad if i == 1 else fine
            assert "the value of key 'k01' for " in str(caught.value)  # with threads or without
            for rspec in (f"ark:{tmp_path}/s{threads}.ark", f"scp:{tmp_path}/s{threads}.scp"):
                assert [k for k, _ in tablio.open(rspec)] == ["k00"], (threads, last, rspec)
        # Writes on past the error, which a later write() brings: every other value.
        spec = f"ark,scp:{tmp_path}/n{threads}.ark,{tmp_path}/n{threads}.scp"
        w = tablio.writer(spec, type=type, compression_method=2, threads=threads)
        errors = []
        for i, key in enumerate(keys):
            try:
                w[key] = bad if i == 1 else fine
            except tablio.UsageError as e:
                errors.append(str(e))
        w.close()
        assert len(errors) == 1 and "the value of key 'k01' for " in errors[0]
        for rspec in (f"ark:{tmp_path}/n{threads}.ark", f"scp:{tmp_path}/n{threads}.scp"):
            assert [k for k, _ in tablio.open(rspec)] == keys[:1] + keys[2:], (threads, rspec)
