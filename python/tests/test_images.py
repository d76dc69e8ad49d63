"""images=: a sample's JPEG and PNG members decoded to the pixels Pillow gives, in the table's
threads, the same with threads or without; bad images are FormatErrors naming their key."""
import io

import pytest

np = pytest.importorskip("numpy")
Image = pytest.importorskip("PIL.Image")
tablio = pytest.importorskip("tablio")


def encoded(array, fmt, **options):
    out = io.BytesIO()
    Image.fromarray(array).save(out, fmt, **options)
    return out.getvalue()


def pillow(data, mode="RGB", draft=None):
    image = Image.open(io.BytesIO(data))
    if draft:
        image.draft(mode, draft)
    return np.asarray(image.convert(mode))


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    rng = np.random.default_rng(7)
    samples = {}
    for i in range(120):
        yy, xx = np.mgrid[0:96, 0:128]
        a = np.stack([(xx * (1 + i % 3)) % 256, (yy * 2 + i) % 256, (xx + yy) % 256], -1)
        a = (a + rng.integers(0, 30, a.shape)).clip(0, 255).astype(np.uint8)
        sample = {"cls": str(i % 10).encode()}
        if i % 4 == 3:
            sample["png"] = encoded(a, "PNG")
        elif i % 4 == 2:
            sample["left.jpg"] = encoded(a[..., 0], "JPEG", quality=85)  # gray
        else:
            sample["jpg"] = encoded(a, "JPEG", quality=90, progressive=i % 2 == 1)
        samples[f"s{i:04d}"] = sample
    path = tmp_path_factory.mktemp("images") / "shard.tar"
    with tablio.writer(f"tar:{path}", type="sample") as w:
        for key, sample in samples.items():
            w[key] = sample
    return path, samples


def image_of(sample):
    return next((ext, data) for ext, data in sample.items() if ext.endswith(("jpg", "png")))


@pytest.mark.parametrize("threads", [None, 3])
def test_images_are_pillows_pixels(shard, threads):
    path, samples = shard
    read = dict(tablio.open(f"tar:{path}", type="sample", images=True, threads=threads))
    assert list(read) == list(samples)
    for key, sample in samples.items():
        ext, data = image_of(sample)
        got = read[key][ext]
        assert got.dtype == np.uint8 and np.array_equal(got, pillow(data)), key
        assert read[key]["cls"] == sample["cls"]  # other members stay bytes


def test_image_options(shard):
    path, samples = shard
    key = "s0000"
    data = samples[key]["jpg"]
    opts = [({"draft": (64, 48)}, pillow(data, draft=(64, 48))),
            ({"draft": (20, 20)}, pillow(data, draft=(20, 20))),
            ({"channels_first": True}, pillow(data).transpose(2, 0, 1)),
            ({"bgr": True}, pillow(data)[..., ::-1])]
    for options, expected in opts:
        got = tablio.random_access(f"tar:{path}", type="sample", images=options)[key]["jpg"]
        assert got.shape == expected.shape and np.array_equal(got, expected), options
    gray = samples["s0002"]["left.jpg"]
    got = tablio.random_access(f"tar:{path}", type="sample", images={"channels": 1})["s0002"]["left.jpg"]
    assert np.array_equal(got, pillow(gray, "L"))
    with pytest.raises(tablio.FormatError, match="colour"):
        tablio.load(f"tar:{path}", type="sample", images={"channels": 1})


def test_bad_images_name_their_key(tmp_path):
    good = encoded(np.zeros((8, 8, 3), np.uint8), "JPEG")
    with tablio.writer(f"tar:{tmp_path}/bad.tar", type="sample") as w:
        for i in range(40):
            w[f"k{i:02d}"] = {"jpg": good if i != 25 else good[: len(good) // 2]}
    for threads in (None, 2):
        keys = []
        with pytest.raises(tablio.FormatError) as caught:
            for key, _ in tablio.open(f"tar:{tmp_path}/bad.tar", type="sample", images=True, threads=threads):
                keys.append(key)
        assert len(keys) == 25, (threads, str(caught.value))
        assert caught.value.key == "k25" and caught.value.path.endswith("bad.tar")
    with pytest.raises(tablio.UsageError, match="type 'sample'"):
        tablio.open(f"tar:{tmp_path}/bad.tar", type="bytes", images=True)
    for bad in ({"size": 3}, {"channels": 2}, {"draft": (1, 2, 3)}, "yes"):
        with pytest.raises(tablio.UsageError):
            tablio.open(f"tar:{tmp_path}/bad.tar", type="sample", images=bad)


def test_torch_batches_from_threads_match_one_thread(shard):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    path, _ = shard
    batches = {}
    for threads in (None, 2):
        ds = tt.TableIterableDataset(f"tar:{path}", type="sample", batch_size=8, images={"draft": (64, 48)},
                                     threads=threads, shuffle=True, seed=3)
        batches[threads] = [b for b in torch.utils.data.DataLoader(ds, batch_size=None, num_workers=0)]
    def same(a, b):
        if isinstance(a, torch.Tensor):
            return isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b)
        if isinstance(a, dict):
            return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        if isinstance(a, (list, tuple)):
            return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        return a == b

    assert len(batches[None]) == len(batches[2]) == 15
    assert all(same(one, two) for one, two in zip(batches[None], batches[2]))
    assert batches[2][0]["jpg"].shape[1:] == (48, 64, 3) and batches[2][0]["jpg"].dtype == torch.uint8


def test_a_bad_image_is_left_out_alone_under_on_error_skip(tmp_path):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    good = encoded(np.full((8, 8, 3), 90, np.uint8), "JPEG")
    with tablio.writer(f"tar:{tmp_path}/skip.tar", type="sample") as w:
        for i in range(10):
            w[f"s{i}"] = {"jpg": good if i != 3 else good[: len(good) // 2], "cls": str(i).encode()}
    # The table reads on past it: skipping it decodes nothing; converting it is the error.
    with tablio.open(f"tar:{tmp_path}/skip.tar", type="sample", images=True) as table:
        assert table.skip(4) == 4 and [k for k, _ in table] == ["s4", "s5", "s6", "s7", "s8", "s9"]
    for threads, batch_size in ((None, None), (2, None), (2, 4)):
        ds = tt.TableIterableDataset(f"tar:{tmp_path}/skip.tar", type="sample", images=True, on_error="skip",
                                     with_keys=True, threads=threads, batch_size=batch_size)
        with pytest.warns(RuntimeWarning, match="s3"):
            items = list(torch.utils.data.DataLoader(ds, batch_size=None))
        keys = [k for item in items for k in ([item[0]] if isinstance(item[0], str) else item[0])]
        # Only s3 is left out: a batch is short of it; a single record's place is taken by the
        # next one (the epoch keeps its length).
        assert set(keys) == {f"s{i}" for i in range(10) if i != 3}, (threads, batch_size)
        assert len(keys) == (9 if batch_size else 10)


def test_corrupt_jpeg_data_decodes_as_pillow_decodes_it(tmp_path):
    data = bytearray(encoded(np.tile(np.arange(64, dtype=np.uint8), (64, 1))[..., None].repeat(3, -1), "JPEG"))
    scan = data.find(b"\xff\xda")
    for at in range(scan + 40, len(data) - 10, 97):
        data[at] = data[at] ^ 0x55 if data[at] != 0xff and data[at] ^ 0x55 != 0xff else data[at]
    bad = bytes(data)
    with tablio.writer(f"tar:{tmp_path}/c.tar", type="sample") as w:
        w["k"] = {"jpg": bad}
    try:
        expected = pillow(bad)
    except OSError:
        with pytest.raises(tablio.FormatError):
            tablio.load(f"tar:{tmp_path}/c.tar", type="sample", images=True)
        return
    got = dict(tablio.open(f"tar:{tmp_path}/c.tar", type="sample", images=True))["k"]["jpg"]
    assert np.array_equal(got, expected)
