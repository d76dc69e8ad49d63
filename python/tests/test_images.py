"""images=: a sample's JPEG and PNG members, a Caffe encoded Datum's image and an Example's
image/encoded feature decoded to the pixels Pillow gives, in the table's threads, the same with
threads or without; bad images are FormatErrors naming their key."""
import io
import shutil
import tarfile

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


def member_offset(path, name):
    """Where a tar member's data starts: the offset a sample's errors name."""
    with tarfile.open(path) as tar:
        return tar.getmember(name).offset_data


def tfrecord_data_offsets(path):
    """Where each record's data starts in a TFRecord file (after its length and length CRC)."""
    data, at, offsets = path.read_bytes(), 0, []
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        offsets.append(at + 12)
        at += 12 + length + 4
    return offsets


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
        assert caught.value.offset == member_offset(tmp_path / "bad.tar", "k25.jpg"), str(caught.value)
        assert "in member 'jpg'" in str(caught.value)
    with tablio.writer(f"tar:{tmp_path}/pair.tar", type="sample") as w:  # the member that failed
        w["p0"] = {"left.jpg": good, "right.jpg": good[:len(good) // 2]}
    with pytest.raises(tablio.FormatError, match="in member 'right.jpg'") as caught:
        list(tablio.open(f"tar:{tmp_path}/pair.tar", type="sample", images=True))
    assert caught.value.offset == member_offset(tmp_path / "pair.tar", "p0.left.jpg")  # the sample's first
    with pytest.raises(tablio.FormatError) as caught:
        tablio.random_access(f"tar:{tmp_path}/bad.tar", type="sample", images=True)["k25"]
    assert caught.value.offset == member_offset(tmp_path / "bad.tar", "k25.jpg"), str(caught.value)
    with pytest.raises(tablio.UsageError, match="applies to types 'sample', 'datum', 'example', not 'bytes'"):
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


def test_stray_bytes_before_a_header_marker_decode_as_pillow_decodes_them(tmp_path):
    torchvision = pytest.importorskip("torchvision")
    from PIL import Image
    good = encoded(photo(1, 120, 200), "JPEG")
    for marker, junk in ((b"\xff\xc4", b"\x01\x02\x03\x04"), (b"\xff\xda", b"\x00\x00\x00")):
        at = good.find(marker)
        bad = good[:at] + junk + good[at:]  # libjpeg warns of extraneous bytes; Pillow decodes past them
        with tablio.writer(f"tar:{tmp_path}/s.tar", type="sample") as w:
            w["k"] = {"jpg": bad}
        expected = pillow(bad)
        assert np.array_equal(expected, pillow(good))
        for threads in (None, 2):
            with tablio.open(f"tar:{tmp_path}/s.tar", type="sample", images=True, threads=threads) as t:
                assert np.array_equal(dict(t)["k"]["jpg"], expected), (marker, threads)
        crop = {"resize": 72, "center_crop": 64}
        eval_pil = torchvision.transforms.Compose([torchvision.transforms.Resize(72), torchvision.transforms.CenterCrop(64),
                                                   torchvision.transforms.PILToTensor()])
        with tablio.open(f"tar:{tmp_path}/s.tar", type="sample", images=crop) as t:
            got = dict(t)["k"]["jpg"]
        assert np.array_equal(got, eval_pil(Image.open(io.BytesIO(bad)).convert("RGB")).numpy()), marker


def photo(i, height=40, width=56):
    yy, xx = np.mgrid[0:height, 0:width]
    return np.stack([(xx * 3 + i) % 256, (yy * 5) % 256, (xx + yy + 7 * i) % 256], -1).astype(np.uint8)


@pytest.fixture(scope="module")
def encoded_datums(tmp_path_factory):
    """An LMDB of encoded Datums, as convert_imageset --encoded writes them: JPEG and PNG,
    color and gray."""
    images = {}
    for i in range(30):
        a = photo(i)
        images[f"{i:08d}_img{i}.jpg"] = (encoded(a[..., 1], "JPEG") if i % 5 == 4 else
                                        encoded(a, "PNG") if i % 5 == 3 else encoded(a, "JPEG", quality=90), i % 7)
    path = tmp_path_factory.mktemp("datums") / "train_lmdb"
    with tablio.writer(f"lmdb:{path}", type="datum") as w:
        for key, (data, label) in images.items():
            w[key] = (data, label)
    return path, images


def caffe_pixels(data, force_color=False):
    """What Caffe's data layer gives for an encoded Datum: OpenCV's imdecode, the channels
    stored (or force_color's three), (C, H, W) in B, G, R; libjpeg-turbo's and libpng's pixels,
    as Pillow's."""
    if Image.open(io.BytesIO(data)).mode == "L" and not force_color:
        return pillow(data, "L")[None]
    return pillow(data)[..., ::-1].transpose(2, 0, 1)


@pytest.mark.parametrize("threads", [None, 2])
def test_encoded_datums_decode_as_caffes_data_layer_gives_them(encoded_datums, threads):
    path, images = encoded_datums
    read = list(tablio.open(f"lmdb:{path}", type="datum", images=True, threads=threads))
    assert [k for k, _ in read] == list(images)
    for key, (image, label) in read:
        data, expected_label = images[key]
        assert label == expected_label and image.dtype == np.uint8
        assert np.array_equal(image, caffe_pixels(data)), key
    # Without images= they stay encoded bytes, as before.
    key, (image, label) = next(iter(tablio.open(f"lmdb:{path}", type="datum")))
    assert image == images[key][0]


def test_encoded_datum_options_batches_and_lookup(encoded_datums):
    path, images = encoded_datums
    key = "00000001_img1.jpg"
    data = images[key][0]
    table = tablio.random_access(f"lmdb:{path}", type="datum", images=True)
    assert np.array_equal(table[key][0], caffe_pixels(data))
    as_pillow = tablio.random_access(f"lmdb:{path}", type="datum",
                                     images={"channels": 3, "channels_first": False, "bgr": False})
    assert np.array_equal(as_pillow[key][0], pillow(data))
    gray_key = "00000004_img4.jpg"
    assert np.array_equal(table[gray_key][0], pillow(images[gray_key][0], "L")[None])  # (1, H, W), as Caffe's
    color = tablio.random_access(f"lmdb:{path}", type="datum", images={"channels": 3})
    assert np.array_equal(color[gray_key][0], caffe_pixels(images[gray_key][0], force_color=True))
    scaled = tablio.random_access(f"lmdb:{path}", type="datum", images=True, scale=1 / 255)[key][0]
    assert scaled.dtype == np.float32 and np.array_equal(scaled, caffe_pixels(data).astype(np.float32) * np.float32(1 / 255))
    with tablio.open(f"lmdb:{path}", type="datum", images={"channels": 3}, threads=2) as t:
        keys, (pixels, labels) = next(t.batches(8))
    assert pixels.shape == (8, 3, 40, 56) and labels.tolist() == [images[k][1] for k in keys]
    assert all(np.array_equal(pixels[i], caffe_pixels(images[k][0], True)) for i, k in enumerate(keys))
    with tablio.open(f"lmdb:{path}", type="datum", images=True) as t:  # gray and color: a list
        keys, (pixels, labels) = next(t.batches(8))
    assert [p.shape[0] for p in pixels] == [1 if k.startswith("00000004") else 3 for k in keys]
    small = dict(tablio.open(f"lmdb:{path}", type="datum", images={"draft": (28, 20)}))
    assert small[key][0].shape == (3, 20, 28)


def test_caffes_own_encoded_datum_decodes(data, tmp_path):
    """float_encoded_lmdb: a Datum with an encoded JPEG (and float_data beside it), as Caffe's
    tools write them."""
    db = tmp_path / "float_encoded_lmdb"
    shutil.copytree(data / "caffe" / "float_encoded_lmdb", db)
    raw = dict(tablio.open(f"lmdb:{db}", type="datum"))
    decoded = dict(tablio.open(f"lmdb:{db}", type="datum", images=True))
    assert isinstance(raw["00000001"][0], bytes) and decoded["00000001"][1] == 7
    assert np.array_equal(decoded["00000001"][0], caffe_pixels(raw["00000001"][0]))
    assert np.array_equal(decoded["00000000"][0], raw["00000000"][0])  # not encoded: as it was


@pytest.fixture(scope="module")
def examples(tmp_path_factory):
    """A TFRecord file of Examples as TensorFlow's image datasets (slim, object detection)
    write them: image/encoded, image/format, image/class/label."""
    records = {}
    for i in range(24):
        a = photo(i, 32 + 8 * (i == 17), 48)  # one taller than the rest
        data = encoded(a, "PNG") if i % 6 == 5 else encoded(a, "JPEG", quality=90)
        records[f"r{i:03d}"] = {"image/encoded": [data], "image/format": [b"png" if i % 6 == 5 else b"jpeg"],
                                "image/class/label": [i % 5]}
    path = tmp_path_factory.mktemp("examples") / "train.tfrecord"
    with tablio.writer(f"tfrecord,key=id:{path}", type="example") as w:
        for key, features in records.items():
            w[key] = features
    return path, records


@pytest.mark.parametrize("threads", [None, 3])
def test_example_image_encoded_decodes_to_pillows_pixels(examples, threads):
    path, records = examples
    read = list(tablio.open(f"tfrecord,key=id:{path}", type="example", images=True, threads=threads))
    assert [k for k, _ in read] == list(records)
    for key, features in read:
        expected = records[key]
        image = features["image/encoded"]
        assert image.dtype == np.uint8 and np.array_equal(image, pillow(expected["image/encoded"][0])), key
        assert features["image/format"] == expected["image/format"]
        assert features["image/class/label"].tolist() == expected["image/class/label"]
    looked_up = tablio.random_access(f"tfrecord,key=id:{path}", type="example", images={"bgr": True})["r005"]
    assert np.array_equal(looked_up["image/encoded"], pillow(records["r005"]["image/encoded"][0])[..., ::-1])


def test_example_image_batches_stack_and_named_features(examples, tmp_path):
    path, records = examples
    with tablio.open(f"tfrecord,key=id:{path}", type="example", images=True, threads=2) as t:
        (keys, first), _, (ragged_keys, ragged) = t.batches(8)  # the third holds the taller r017
    assert first["image/encoded"].shape == (8, 32, 48, 3) and first["image/class/label"].shape == (8, 1)
    assert all(np.array_equal(first["image/encoded"][i], pillow(records[k]["image/encoded"][0]))
               for i, k in enumerate(keys))
    assert isinstance(ragged["image/encoded"], list) and ragged["image/encoded"][1].shape == (40, 48, 3)
    # Other names, and a feature of several images: a list of arrays.
    views = encoded(photo(1), "JPEG"), encoded(photo(2), "PNG")
    with tablio.writer(f"tfrecord:{tmp_path}/views.tfrecord", type="example") as w:
        w["00000000"] = {"left/jpeg": [views[0]], "views": list(views)}
    ((_, features),) = tablio.open(f"tfrecord:{tmp_path}/views.tfrecord", type="example",
                                   images={"features": ["left/jpeg", "views"]})
    assert np.array_equal(features["left/jpeg"], pillow(views[0]))
    assert [v.shape for v in features["views"]] == [(40, 56, 3)] * 2
    assert np.array_equal(features["views"][1], pillow(views[1]))
    with pytest.raises(tablio.UsageError, match="features"):
        tablio.open(f"tfrecord:{tmp_path}/views.tfrecord", type="datum", images={"features": ["x"]})


def test_bad_datum_and_example_images_name_their_key(tmp_path):
    good = encoded(photo(0), "JPEG")
    with tablio.writer(f"lmdb:{tmp_path}/bad_lmdb", type="datum") as w:
        for i in range(12):
            w[f"{i:08d}"] = (good if i != 9 else good[:100], 0)
    with tablio.writer(f"tfrecord:{tmp_path}/bad.tfrecord", type="example") as w:
        for i in range(12):
            w[f"{i:08d}"] = {"image/encoded": [good if i != 9 else b"GIF89a"]}
    # Where the bad entries start: the Datum's bytes in LMDB's file (its image is their last
    # field), the Example record's data in the TFRecord file.
    lmdb = pytest.importorskip("lmdb")
    with lmdb.open(str(tmp_path / "bad_lmdb"), readonly=True, lock=False) as env, env.begin() as txn:
        bad_datum = txn.get(b"00000009")
    offsets = {"datum": (tmp_path / "bad_lmdb" / "data.mdb").read_bytes().index(bad_datum),
               "example": tfrecord_data_offsets(tmp_path / "bad.tfrecord")[9]}
    for spec, type in ((f"lmdb:{tmp_path}/bad_lmdb", "datum"), (f"tfrecord:{tmp_path}/bad.tfrecord", "example")):
        for threads in (None, 2):
            keys = []
            with pytest.raises(tablio.FormatError) as caught:
                for key, _ in tablio.open(spec, type=type, images=True, threads=threads):
                    keys.append(key)
            assert len(keys) == 9 and caught.value.key == "00000009", (spec, threads, str(caught.value))
            assert str(tmp_path) in caught.value.path
            assert caught.value.offset == offsets[type], (spec, threads, str(caught.value))
        with pytest.raises(tablio.FormatError) as caught:
            tablio.random_access(spec, type=type, images=True)["00000009"]
        assert caught.value.offset == offsets[type], (spec, str(caught.value))
        with tablio.open(spec, type=type, images=True) as table:  # reads on past it
            assert table.skip(10) == 10 and [k for k, _ in table] == ["00000010", "00000011"]
        # In a batch, the error names the record it comes from.
        for threads in (None, 2):
            with tablio.open(spec, type=type, images=True, threads=threads) as table:
                batches = table.batches(4)
                next(batches), next(batches)
                with pytest.raises(tablio.FormatError) as caught:
                    next(batches)
                assert caught.value.key == "00000009", (spec, threads, str(caught.value))


def test_iteration_stops_after_the_error_that_ended_the_table(tmp_path):
    with tablio.writer(f"tfrecord:{tmp_path}/e.tfrecord", type="example") as w:
        for i in range(5):
            w[f"{i:08d}"] = {"x": [i]}
    data = (tmp_path / "e.tfrecord").read_bytes()
    (tmp_path / "cut.tfrecord").write_bytes(data[: len(data) * 3 // 5 + 7])  # inside record 3
    table = iter(tablio.open(f"tfrecord:{tmp_path}/cut.tfrecord", type="example"))
    keys = []
    with pytest.raises(tablio.FormatError):
        for key, _ in table:
            keys.append(key)
    assert keys and list(table) == []  # no "after the end of the table" error


def start_methods():
    """Every way users start DataLoader workers (fork only where conftest.py allows it)."""
    import os
    return ("spawn", "forkserver") if os.environ.get("TABLIO_SANITIZED") else ("fork", "spawn", "forkserver")


def test_datum_images_in_threads_inside_workers_of_every_start_method(encoded_datums):
    """threads= and images= inside DataLoader workers, however they are started: the same
    batches, each record once, as in the main process."""
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    path, images = encoded_datums
    def epoch(**loader):
        ds = tt.TableIterableDataset(f"lmdb:{path}", type="datum", images=True, threads=2, batch_size=4,
                                     with_keys=True, shuffle=True, seed=5)
        batches = list(torch.utils.data.DataLoader(ds, batch_size=None, **loader))
        return {key: (pixels[i], labels[i]) for keys, (pixels, labels) in batches for i, key in enumerate(keys)}
    alone = epoch()
    assert sorted(alone) == sorted(images)
    for key, (pixels, label) in alone.items():
        assert pixels.dtype == torch.uint8 and np.array_equal(pixels.numpy(), caffe_pixels(images[key][0]))
        assert int(label) == images[key][1]
    try:
        for method in start_methods():
            got = epoch(num_workers=2, multiprocessing_context=method, timeout=120)
            assert got.keys() == alone.keys(), method
            assert all(torch.equal(got[k][0], alone[k][0]) for k in alone), method
    finally:
        # A forkserver's workers inherit the environment it started in, not a later test's (an
        # endpoint set by monkeypatch): the next test that asks for one gets a fresh server.
        from multiprocessing import forkserver
        forkserver._forkserver._stop()


def test_a_batchs_images_of_one_shape_are_rows_of_one_array_the_dataset_takes_whole(tmp_path):
    torch = pytest.importorskip("torch")
    import tablio.torch as tt
    rng = np.random.default_rng(3)
    for part in range(2):  # 10 samples a shard: batches of 4 span them
        with tablio.writer(f"tar:{tmp_path}/part-{part}.tar", type="sample") as w:
            for i in range(10):
                h, w_ = int(rng.integers(40, 70)), int(rng.integers(40, 70))
                w[f"p{part}{i}"] = {"jpg": encoded(rng.integers(0, 255, (h, w_, 3), np.uint8), "JPEG"), "cls": b"1"}
    spec, crop = f"tar:{tmp_path}/part-{{0..1}}.tar", {"resize": 36, "center_crop": 32}
    with tablio.open(spec, type="sample", images=crop, threads=2) as table:
        keys, batch = table._batch(4)
    rows = batch[0]["jpg"].base
    assert rows.shape == (4, 3, 32, 32) and all(v["jpg"].base is rows for v in batch) and rows.flags.writeable
    before = batch[1]["jpg"].copy()
    batch[0]["jpg"][:] = 0  # a row of its own
    assert np.array_equal(batch[1]["jpg"], before)
    with tablio.open(spec, type="sample", images=crop) as table:
        one_by_one = [(k, v) for k, v in table]
    for options in ({}, {"threads": 2}):
        ds = tt.TableIterableDataset(spec, type="sample", batch_size=4, images=crop, with_keys=True, **options)
        got = list(torch.utils.data.DataLoader(ds, batch_size=None))
        assert [k for ks, _ in got for k in ks] == [k for k, _ in one_by_one]
        for n, (keys, b) in enumerate(got):  # the batch spanning the shards too (8-11)
            expected = torch.stack([torch.from_numpy(v["jpg"]) for _, v in one_by_one[n * 4:n * 4 + 4]])
            assert b["jpg"].dtype == torch.uint8 and torch.equal(b["jpg"], expected), n
            assert list(b.keys()) == ["jpg", "cls", "__missing__"] and b["__missing__"] == {}
    # Images of other sizes (whole images) are arrays of their own, batched as a list.
    with tablio.open(spec, type="sample", images=True) as table:
        keys, batch = table._batch(4)
    assert len({v["jpg"].shape for v in batch}) > 1 and all(v["jpg"].base is None for v in batch)


def test_rows_of_a_few_arrays_are_joined_in_order_and_anything_else_is_stacked():
    pytest.importorskip("torch")
    from tablio.torch import _runs_of_rows
    a = np.arange(24, dtype=np.uint8).reshape(4, 2, 3).copy()  # arrays of their own, as a batch's are
    b = np.arange(100, 118, dtype=np.uint8).reshape(3, 2, 3).copy()
    runs = _runs_of_rows([a[2], a[3], b[0], b[1]])
    assert [r.base is x for r, x in zip(runs, (a, b))] == [True, True]
    assert np.array_equal(np.concatenate(runs), np.stack([a[2], a[3], b[0], b[1]]))
    assert len(_runs_of_rows([a[0], a[1], a[2]])) == 1
    assert len(_runs_of_rows([a[0], a[2]])) == 2  # not consecutive: two runs of one row
    assert _runs_of_rows([a[0], a[1].copy()]) is None  # an array of its own
    assert _runs_of_rows([a[0], a[1, :, :2]]) is None  # a row's part
    assert _runs_of_rows([a[0], a[1].astype(np.int16)]) is None
    c = np.zeros((2, 3, 2), np.uint8)
    assert _runs_of_rows([a[0], c[0]]) is None  # another row shape
    assert _runs_of_rows([a[0], a[2], a[0], a[2], a[0]]) is None  # too many runs to join
