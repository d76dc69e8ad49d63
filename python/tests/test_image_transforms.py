"""images='s training transforms in the table's threads: torchvision's RandomResizedCrop, flip,
Resize + CenterCrop and Normalize with the values torchvision gives on Pillow, and Caffe's
transform_param with the values of DataTransformer::Transform's arithmetic; draws that follow
the seed and the key alone, so that threads, workers and epochs see what they should."""
import io
import os

import pytest

np = pytest.importorskip("numpy")
Image = pytest.importorskip("PIL.Image")
tablio = pytest.importorskip("tablio")


def encoded(array, fmt="JPEG", **options):
    out = io.BytesIO()
    Image.fromarray(array).save(out, fmt, **options)
    return out.getvalue()


def photo(rng, height, width, i=0):
    yy, xx = np.mgrid[0:height, 0:width]
    a = np.stack([(xx * 3 + i) % 256, (yy * 2 + 5 * i) % 256, (xx + yy) % 256], -1)
    return (a + rng.integers(0, 60, a.shape)).clip(0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """A tar shard of photos of 150 to 420 pixels a side (some taller, some wider, one gray,
    one PNG), as WebDataset keeps them."""
    rng = np.random.default_rng(11)
    samples = {}
    for i in range(36):
        h, w = int(rng.integers(150, 420)), int(rng.integers(150, 420))
        a = photo(rng, h, w, i)
        image = ("png", encoded(a, "PNG")) if i == 5 else ("jpg", encoded(a[..., 0] if i == 7 else a, quality=90))
        samples[f"p{i:03d}"] = {image[0]: image[1], "cls": str(i % 10).encode()}
    path = tmp_path_factory.mktemp("photos") / "shard-000000.tar"
    with tablio.writer(f"tar:{path}", type="sample") as w:
        for key, sample in samples.items():
            w[key] = sample
    return path, samples


def pil(sample):
    data = sample.get("jpg") or sample.get("png")
    return Image.open(io.BytesIO(data)).convert("RGB")


def image(sample):
    return sample["jpg"] if "jpg" in sample else sample["png"]


def differences(got, expected):
    d = np.abs(got.astype(np.int64) - expected.astype(np.int64))
    return int(d.max()), float(d.mean())


@pytest.mark.parametrize("threads", [None, 2])
def test_eval_transform_is_torchvisions_on_pillow(photos, threads):
    T = pytest.importorskip("torchvision.transforms")
    path, samples = photos
    reference = T.Compose([T.Resize(256), T.CenterCrop(224), T.PILToTensor()])
    read = list(tablio.open(f"tar:{path}", type="sample", images={"resize": 256, "center_crop": 224}, threads=threads))
    assert [k for k, _ in read] == list(samples)
    worst = 0
    for key, sample in read:
        got, expected = image(sample), reference(pil(samples[key])).numpy()
        assert got.shape == expected.shape == (3, 224, 224) and got.dtype == np.uint8
        worst = max(worst, differences(got, expected)[0])
    assert worst == 0  # Pillow's own resampling: not within 1, the same
    # Resize alone keeps the ratio, as torchvision computes the longer side; channels last if asked.
    for key, sample in tablio.open(f"tar:{path}", type="sample", images={"resize": 100, "channels_first": False}):
        expected = np.asarray(T.Resize(100)(pil(samples[key])))
        assert np.array_equal(image(sample), expected), key


def test_normalised_values_are_totensor_then_normalize(photos):
    T = pytest.importorskip("torchvision.transforms")
    path, samples = photos
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    reference = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(mean, std)])
    for key, sample in tablio.open(f"tar:{path}", type="sample",
                                   images={"resize": 256, "center_crop": 224, "mean": mean, "std": std}):
        got = image(sample)
        assert got.dtype == np.float32 and got.shape == (3, 224, 224)
        assert np.array_equal(got, reference(pil(samples[key])).numpy()), key


def test_center_crop_larger_than_the_image_pads_as_torchvision(photos):
    T = pytest.importorskip("torchvision.transforms")
    path, samples = photos
    for key, sample in tablio.open(f"tar:{path}", type="sample", images={"center_crop": 300}):
        expected = T.PILToTensor()(T.CenterCrop(300)(pil(samples[key]))).numpy()
        assert np.array_equal(image(sample), expected), key


@pytest.mark.parametrize("crop", [224, {"size": 96, "scale": [0.5, 0.9], "ratio": [0.5, 2.0]}])
def test_train_transform_is_torchvisions_for_the_same_box(photos, crop):
    T = pytest.importorskip("torchvision.transforms")
    F = pytest.importorskip("torchvision.transforms.functional")
    path, samples = photos
    options = {"random_resized_crop": crop, "flip": 0.5, "seed": 5, "dct_scaling": False}
    size = crop if isinstance(crop, int) else crop["size"]
    flips, areas = 0, []
    for key, sample in tablio.open(f"tar:{path}", type="sample", images=options, threads=2):
        im = pil(samples[key])
        draw = tablio.transform_draw(options, im.width, im.height, key)
        left, top, w, h = draw["box"]
        assert 0 <= left and left + w <= im.width and 0 <= top and top + h <= im.height
        areas.append(w * h / (im.width * im.height))
        expected = F.resized_crop(im, top, left, h, w, [size, size], T.InterpolationMode.BILINEAR)
        if draw["flip"]:
            expected, flips = F.hflip(expected), flips + 1
        assert np.array_equal(image(sample), F.pil_to_tensor(expected).numpy()), key
    # torchvision's sampling: areas spread over the scale range, about half flipped
    low, high = (0.08, 1.0) if isinstance(crop, int) else crop["scale"]
    assert min(areas) >= low * 0.9 and max(areas) <= high * 1.1 and max(areas) - min(areas) > (high - low) / 3
    assert 8 <= flips <= 28


def test_dct_scaling_is_torchvision_on_pillows_draft(photos, capsys):
    """With dct_scaling (the default for random_resized_crop), a crop at least twice its output
    is decoded at 1/2, 1/4 or 1/8 in the DCT: the pixels are torchvision's on the image Pillow's
    draft gives, the box scaled alike; how far that is from the whole image's is reported."""
    T = pytest.importorskip("torchvision.transforms")
    F = pytest.importorskip("torchvision.transforms.functional")
    path, samples = photos
    size = 64
    options = {"random_resized_crop": {"size": size, "scale": [0.3, 1.0]}, "flip": 0.5, "seed": 1}
    scaled, worst, total, count = 0, 0, 0.0, 0
    for key, sample in tablio.open(f"tar:{path}", type="sample", images=options, threads=2):
        im = pil(samples[key])
        draw = tablio.transform_draw(options, im.width, im.height, key)
        left, top, w, h = draw["box"]
        s = next((s for s in (8, 4, 2) if min(w // size, h // size) >= s), 1)
        drafted = Image.open(io.BytesIO(samples[key].get("jpg") or samples[key].get("png")))
        if s > 1 and drafted.format == "JPEG":
            scaled += 1
            drafted.draft("RGB" if drafted.mode != "L" else "L", (im.width // s, im.height // s))
            drafted = drafted.convert("RGB")
            assert drafted.size == (-(-im.width // s), -(-im.height // s))
            x0, y0 = left // s, top // s
            x1, y1 = min(drafted.width, max(x0 + 1, (left + w) // s)), min(drafted.height, max(y0 + 1, (top + h) // s))
            expected = F.resized_crop(drafted, y0, x0, y1 - y0, x1 - x0, [size, size], T.InterpolationMode.BILINEAR)
        else:
            expected = F.resized_crop(im, top, left, h, w, [size, size], T.InterpolationMode.BILINEAR)
        if draw["flip"]:
            expected = F.hflip(expected)
        assert np.array_equal(image(sample), F.pil_to_tensor(expected).numpy()), key
        whole = F.resized_crop(im, top, left, h, w, [size, size], T.InterpolationMode.BILINEAR)
        whole = F.pil_to_tensor(F.hflip(whole) if draw["flip"] else whole).numpy()
        d = np.abs(image(sample).astype(int) - whole.astype(int))
        worst, total, count = max(worst, int(d.max())), total + float(d.sum()), count + d.size
    assert scaled >= 10
    with capsys.disabled():
        print(f"\n  dct_scaling: {scaled} of {len(samples)} crops decoded scaled; against the whole image's "
              f"pixels: max difference {worst}, mean {total / count:.2f}")


def test_the_fallback_box_is_torchvisions_centre():
    T = pytest.importorskip("torchvision.transforms")
    # Strips no attempt fits in at scale near 1: torchvision's centre at the nearest ratio.
    options = {"random_resized_crop": {"size": 32, "scale": [0.99, 1.0]}}
    for width, height in [(400, 50), (50, 400), (401, 51)]:
        top, left, h, w = T.RandomResizedCrop.get_params(Image.new("RGB", (width, height)), [0.99, 1.0], [3 / 4, 4 / 3])
        assert tablio.transform_draw(options, width, height, "k")["box"] == (left, top, w, h)
    square = {"random_resized_crop": {"size": 32, "scale": [1.0, 1.0], "ratio": [1.0, 1.0]}}
    assert tablio.transform_draw(square, 60, 60, "k")["box"] == (0, 0, 60, 60)


def test_draws_follow_seed_and_key_alone(photos):
    path, _ = photos
    options = {"random_resized_crop": 64, "flip": 0.5, "seed": 9}
    one = dict(tablio.open(f"tar:{path}", type="sample", images=options))
    threaded = dict(tablio.open(f"tar:{path}", type="sample", images=options, threads=3))
    looked_up = tablio.random_access(f"tar:{path}", type="sample", images=options)
    for key in one:
        assert np.array_equal(image(one[key]), image(threaded[key]))
        assert np.array_equal(image(one[key]), image(looked_up[key]))
    other = dict(tablio.open(f"tar:{path}", type="sample", images=dict(options, seed=10)))
    assert sum(not np.array_equal(image(one[k]), image(other[k])) for k in one) > len(one) * 3 // 4
    boxes = {tablio.transform_draw(options, 400, 300, k)["box"] for k in one}
    assert len(boxes) > len(one) * 3 // 4  # each key its own box


def test_dataset_batches_are_ready_and_epochs_draw_anew(photos):
    torch = pytest.importorskip("torch")
    tt = pytest.importorskip("tablio.torch")
    path, samples = photos
    options = {"random_resized_crop": 64, "flip": 0.5}

    def epoch(ds, e, **loader):
        ds.set_epoch(e)
        batches = list(tt.DataLoader(ds, batch_size=None, **loader))
        return torch.cat([b["jpg" if "jpg" in b else "png"] for b in batches]), batches

    ds = tt.TableIterableDataset(f"tar:{path}", type="sample", batch_size=6, images=options, threads=2, decode=True,
                                 seed=4)
    first, batches = epoch(ds, 0)
    assert batches[0]["jpg"].shape == (6, 3, 64, 64) and batches[0]["jpg"].dtype == torch.uint8
    assert batches[0]["cls"].dtype == torch.int64
    again, _ = epoch(ds, 0)
    assert torch.equal(first, again)  # an epoch's draws are its own: a resumed epoch sees the same
    second, _ = epoch(ds, 1)
    assert not torch.equal(first, second)
    # The dataset tells what it drew: the epoch's box of a record, as it was cropped.
    keyed = tt.TableIterableDataset(f"tar:{path}", type="sample", images={"random_resized_crop": 64, "flip": 0.5,
                                                                           "dct_scaling": False}, seed=4, with_keys=True)
    keyed.set_epoch(1)
    key, sample = next(iter(keyed))
    im = pil(samples[key])
    draw = keyed.transform_draw(0, key, im.width, im.height)
    T = pytest.importorskip("torchvision.transforms")
    F = pytest.importorskip("torchvision.transforms.functional")
    left, top, w, h = draw["box"]
    expected = F.resized_crop(im, top, left, h, w, [64, 64], T.InterpolationMode.BILINEAR)
    expected = F.pil_to_tensor(F.hflip(expected) if draw["flip"] else expected)
    assert torch.equal(torch.as_tensor(image(sample)), expected)
    # The same records, the same draws, with workers and without threads.
    plain = tt.TableIterableDataset(f"tar:{path}", type="sample", batch_size=6, images=options, decode=True, seed=4)
    assert torch.equal(epoch(plain, 0)[0], first)


# fork only where the build allows it: a sanitized interpreter cannot fork with threads running
START_METHODS = ("spawn", "forkserver") if os.environ.get("TABLIO_SANITIZED") else ("fork", "spawn", "forkserver")


@pytest.mark.parametrize("method", START_METHODS)
def test_workers_of_every_start_method_draw_what_one_process_draws(photos, method):
    torch = pytest.importorskip("torch")
    tt = pytest.importorskip("tablio.torch")
    path, _ = photos
    ds = tt.TableIterableDataset(f"tar:{path}", type="sample", batch_size=6, with_keys=True, seed=3, threads=2,
                                 images={"random_resized_crop": 48, "flip": 0.5})
    ds.set_epoch(2)

    def by_key(**loader):
        out = {}
        for keys, batch in torch.utils.data.DataLoader(ds, batch_size=None, **loader):
            images = batch["jpg"] if "jpg" in batch else batch["png"]
            out.update(zip(keys, images))
        return out

    alone = by_key()
    workers = by_key(num_workers=2, multiprocessing_context=method)
    assert sorted(workers) == sorted(alone)
    assert all(torch.equal(workers[k], alone[k]) for k in alone)


def test_resumed_epoch_has_the_uninterrupted_draws(photos):
    torch = pytest.importorskip("torch")
    tt = pytest.importorskip("tablio.torch")
    path, _ = photos
    ds = tt.TableIterableDataset(f"tar:{path}", type="sample", batch_size=4, shuffle=True, seed=2, threads=2,
                                 images={"random_resized_crop": 48, "flip": 0.5})
    loader = tt.DataLoader(ds, batch_size=None)
    whole = [b["jpg"] for b in loader]
    loader = tt.DataLoader(ds, batch_size=None)
    it = iter(loader)
    for _ in range(3):
        next(it)
    state = loader.state_dict()
    resumed = tt.DataLoader(ds, batch_size=None)
    resumed.load_state_dict(state)
    rest = [b["jpg"] for b in resumed]
    assert len(rest) == len(whole) - 3
    assert all(torch.equal(a, b) for a, b in zip(rest, whole[3:]))


def test_map_style_dataset_draws_anew_each_epoch(photos):
    torch = pytest.importorskip("torch")
    tt = pytest.importorskip("tablio.torch")
    path, samples = photos
    ds = tt.TableDataset(f"tar:{path}", type="sample", images={"random_resized_crop": 48, "flip": 0.5})

    def epoch(e):
        ds.set_epoch(e)
        return [ds[i]["jpg" if "jpg" in ds[i] else "png"] for i in range(len(ds))]

    first, again, second = epoch(0), epoch(0), epoch(1)
    assert all(a.equal(b) for a, b in zip(first, again))
    assert sum(not a.equal(b) for a, b in zip(first, second)) > len(first) * 3 // 4
    # The dataset tells what it drew: the epoch's box of a record, as it was cropped.
    T = pytest.importorskip("torchvision.transforms")
    F = pytest.importorskip("torchvision.transforms.functional")
    exact = tt.TableDataset(f"tar:{path}", type="sample", images={"random_resized_crop": 48, "flip": 0.5,
                                                                   "dct_scaling": False})
    exact.set_epoch(3)
    for i in (0, 5):
        key = exact.keys[i]
        im = pil(samples[key])
        draw = exact.transform_draw(key, im.width, im.height)
        assert draw == exact.transform_draw(key, im.width, im.height, epoch=3) != exact.transform_draw(
            key, im.width, im.height, epoch=4)
        left, top, w, h = draw["box"]
        expected = F.resized_crop(im, top, left, h, w, [48, 48], T.InterpolationMode.BILINEAR)
        expected = F.pil_to_tensor(F.hflip(expected) if draw["flip"] else expected)
        assert torch.equal(torch.as_tensor(image(exact[i])), expected), key


@pytest.mark.parametrize("method", START_METHODS)
def test_map_style_persistent_workers_draw_the_epoch_set_after_they_started(photos, method):
    torch = pytest.importorskip("torch")
    tt = pytest.importorskip("tablio.torch")
    path, _ = photos
    ds = tt.TableDataset(f"tar:{path}", type="sample", images={"random_resized_crop": 48, "flip": 0.5})
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2, persistent_workers=True,
                                         multiprocessing_context=method)

    def epoch(e):
        ds.set_epoch(e)
        return [v["jpg" if "jpg" in v else "png"] for v in loader]

    def alone(e):
        ds.set_epoch(e)
        return [ds[i]["jpg" if "jpg" in ds[i] else "png"] for i in range(len(ds))]

    first, second = epoch(0), epoch(1)  # the same workers, started in epoch 0
    assert all(a.equal(b) for a, b in zip(first, alone(0)))
    assert all(a.equal(b) for a, b in zip(second, alone(1)))
    assert sum(not a.equal(b) for a, b in zip(first, second)) > len(first) * 3 // 4


# ---- Caffe's transform_param


def blob_proto(mean, legacy=True, double=False):
    """A .binaryproto mean, as compute_image_mean writes it, made by protobuf itself from
    caffe.proto's BlobProto."""
    descriptor_pb2 = pytest.importorskip("google.protobuf.descriptor_pb2")
    from google.protobuf import descriptor_pool, message_factory
    f = descriptor_pb2.FileDescriptorProto(name="blob.proto", package="caffe", syntax="proto2")
    shape = f.message_type.add(name="BlobShape")
    shape.field.add(name="dim", number=1, type=3, label=3, options=descriptor_pb2.FieldOptions(packed=True))
    blob = f.message_type.add(name="BlobProto")
    blob.field.add(name="shape", number=7, type=11, label=1, type_name=".caffe.BlobShape")
    blob.field.add(name="data", number=5, type=2, label=3, options=descriptor_pb2.FieldOptions(packed=True))
    blob.field.add(name="double_data", number=8, type=1, label=3, options=descriptor_pb2.FieldOptions(packed=True))
    for n, name in enumerate(["num", "channels", "height", "width"], 1):
        blob.field.add(name=name, number=n, type=5, label=1)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    factory = message_factory.MessageFactory(pool)
    message = factory.GetPrototype(pool.FindMessageTypeByName("caffe.BlobProto"))()
    if legacy:
        message.num, message.channels, message.height, message.width = 1, *mean.shape
    else:
        message.shape.dim.extend([1, *mean.shape])
    (message.double_data if double else message.data).extend(mean.ravel().tolist())
    return message.SerializeToString()


def caffe_transform(chw, crop, top, left, mirror, mean=None, mean_value=None, scale=1.0):
    """DataTransformer::Transform's arithmetic, in float32: (pixel - mean) * scale over the crop
    at (top, left), mirrored, (C, H, W)."""
    c, h, w = chw.shape
    crop_h, crop_w = (crop, crop) if crop else (h, w)
    pixel = chw[:, top:top + crop_h, left:left + crop_w].astype(np.float32)
    if mean is not None:
        out = (pixel - mean[:, top:top + crop_h, left:left + crop_w].astype(np.float32)) * np.float32(scale)
    elif mean_value is not None:
        m = np.array(mean_value if len(mean_value) == c else mean_value * c, np.float32)[:, None, None]
        out = (pixel - m) * np.float32(scale)
    else:
        out = pixel * np.float32(scale)
    return out[:, :, ::-1] if mirror else out


def caffe_decode(data):
    """Caffe's data layer's image: OpenCV's imdecode, (C, H, W) in B, G, R."""
    im = Image.open(io.BytesIO(data))
    if im.mode == "L":
        return np.asarray(im)[None]
    return np.asarray(im.convert("RGB"))[..., ::-1].transpose(2, 0, 1)


@pytest.fixture(scope="module")
def datums(tmp_path_factory):
    """An LMDB of encoded Datums of one size (convert_imageset --encoded --resize_height=64
    --resize_width=80), and one of raw Datums."""
    rng = np.random.default_rng(3)
    folder = tmp_path_factory.mktemp("caffe")
    images = {f"{i:08d}_{i}.jpg": (photo(rng, 64, 80, i), i % 5) for i in range(24)}
    with tablio.writer(f"lmdb:{folder}/encoded_lmdb", type="datum") as w:
        for key, (a, label) in images.items():
            w[key] = (encoded(a, quality=90), label)
    with tablio.writer(f"lmdb:{folder}/raw_lmdb", type="datum") as w:
        for key, (a, label) in images.items():
            w[key] = (a[..., ::-1].transpose(2, 0, 1).copy(), label)
    encoded_db = dict(tablio.open(f"lmdb:{folder}/encoded_lmdb", type="datum"))
    return folder, encoded_db, images


@pytest.mark.parametrize("table", ["encoded_lmdb", "raw_lmdb"])
def test_caffe_test_phase_is_datatransformers(datums, table, tmp_path):
    folder, encoded_db, images = datums
    mean = np.random.default_rng(1).uniform(80, 160, (3, 64, 80)).astype(np.float32)
    (tmp_path / "mean.binaryproto").write_bytes(blob_proto(mean))
    options = {"crop_size": 56, "mirror": True, "mean_file": tmp_path / "mean.binaryproto", "scale": 0.017,
               "train": False}
    for key, (values, label) in tablio.open(f"lmdb:{folder}/{table}", type="datum", images=options, threads=2):
        chw = caffe_decode(encoded_db[key][0]) if table == "encoded_lmdb" else images[key][0][..., ::-1].transpose(2, 0, 1)
        # TEST: the centre, (64 - 56) / 2 and (80 - 56) / 2, mirrored at random as in TRAIN (Caffe's
        # DataTransformer draws the mirror in either phase)
        draw = tablio.transform_draw(options, 80, 64, key, type="datum")
        assert draw["box"] == (12, 4, 56, 56)
        expected = caffe_transform(chw, 56, 4, 12, draw["flip"], mean=mean, scale=0.017)
        assert values.dtype == np.float32 and values.shape == (3, 56, 56)
        assert np.array_equal(values, expected), key
        assert label == images[key][1]


@pytest.mark.parametrize("table", ["encoded_lmdb", "raw_lmdb"])
def test_caffe_train_phase_for_the_same_draws(datums, table):
    folder, encoded_db, images = datums
    options = {"crop_size": 48, "mirror": True, "mean_value": [104, 117, 123], "seed": 8}
    mirrored, offsets = 0, set()
    with tablio.open(f"lmdb:{folder}/{table}", type="datum", images=options, threads=2) as t:
        keys, (values, labels) = next(t.batches(24))
    assert values.shape == (24, 3, 48, 48) and values.dtype == np.float32
    for i, key in enumerate(keys):
        draw = tablio.transform_draw(options, 80, 64, key, type="datum")
        left, top, w, h = draw["box"]
        assert (w, h) == (48, 48) and 0 <= left <= 32 and 0 <= top <= 16
        offsets.add((left, top))
        mirrored += draw["flip"]
        chw = caffe_decode(encoded_db[key][0]) if table == "encoded_lmdb" else images[key][0][..., ::-1].transpose(2, 0, 1)
        assert np.array_equal(values[i], caffe_transform(chw, 48, top, left, draw["flip"], mean_value=[104, 117, 123]))
    assert len(offsets) > 12 and 4 <= mirrored <= 20


def test_caffe_mean_file_forms_and_errors(datums, tmp_path):
    folder, encoded_db, images = datums
    mean = np.random.default_rng(2).uniform(0, 255, (3, 64, 80))
    key = next(iter(images))
    chw = caffe_decode(encoded_db[key][0])
    for legacy, double in [(True, False), (False, False), (False, True)]:
        (tmp_path / "m.binaryproto").write_bytes(blob_proto(mean, legacy, double))
        table = tablio.random_access(f"lmdb:{folder}/encoded_lmdb", type="datum",
                                     images={"mean_file": str(tmp_path / "m.binaryproto")})
        assert np.array_equal(table[key][0], caffe_transform(chw, 0, 0, 0, False, mean=mean.astype(np.float32)))
    # a mean of another size than the images: Caffe's CHECK, here an error naming the record
    (tmp_path / "small.binaryproto").write_bytes(blob_proto(mean[:, :32, :32]))
    with pytest.raises(tablio.FormatError, match="mean_file") as e:
        list(tablio.open(f"lmdb:{folder}/encoded_lmdb", type="datum", images={"mean_file": tmp_path / "small.binaryproto"}))
    assert e.value.key == key
    # damaged mean files: the file and the offset
    good = blob_proto(mean)
    for bad in [good[:len(good) // 2], good[:-3], b"\x08\x01\x10\x03\x18\xff\xff\xff\xff\x07\x20\x05"]:
        (tmp_path / "bad.binaryproto").write_bytes(bad)
        with pytest.raises(tablio.FormatError, match="bad.binaryproto"):
            tablio.open(f"lmdb:{folder}/encoded_lmdb", type="datum", images={"mean_file": tmp_path / "bad.binaryproto"})


def test_crop_larger_than_the_image_names_the_record(datums):
    folder, _, images = datums
    with pytest.raises(tablio.FormatError, match="crop_size 100") as e:
        list(tablio.open(f"lmdb:{folder}/encoded_lmdb", type="datum", images={"crop_size": 100}))
    assert e.value.key == next(iter(images))
    with pytest.raises(tablio.UsageError, match="larger than the image"):
        tablio.transform_draw({"crop_size": 227}, 226, 300, "k")


@pytest.mark.parametrize("images, message", [
    ({"random_resized_crop": 224, "crop_size": 227}, "not both"),
    ({"random_resized_crop": 224, "resize": 256}, "evaluation"),
    ({"mean": [0.5, 0.5, 0.5]}, "mean and std go together"),
    ({"mean": [0.5], "std": [0]}, "no zero"),
    ({"mean_value": [1, 2, 3], "mean_file": "x"}, "not both"),
    ({"flip": 2}, "probability"),
    ({"random_resized_crop": {"size": 224, "scale": [0.9, 0.1]}}, "scale"),
    ({"random_resized_crop": 0}, "size in pixels"),
    ({"crop_size": 227, "mirror": "yes"}, "True or False"),
    ({"seed": -1}, "seed"),
])
def test_transform_options_are_checked_at_open(photos, images, message):
    path, _ = photos
    with pytest.raises(tablio.UsageError, match=message):
        tablio.open(f"tar:{path}", type="sample", images=images)


def test_scale_and_a_transform_are_refused_together(datums):
    folder, _, _ = datums
    with pytest.raises(tablio.UsageError, match="scale="):
        tablio.open(f"lmdb:{folder}/encoded_lmdb", type="datum", images={"crop_size": 32}, scale=0.5)
