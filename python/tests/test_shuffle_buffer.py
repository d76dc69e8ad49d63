"""What a dataset's shuffle buffer holds under images=: the records, undecoded, where a decoded
value is larger (a batch's records decoded once it picks them), else the values. Either way the
batches are the same, with the same draws, errors, skips and resumed epochs."""
import io

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")
tablio = pytest.importorskip("tablio")
tt = pytest.importorskip("tablio.torch")
from tablio import _execute  # noqa: E402


def encoded(array, **options):
    out = io.BytesIO()
    Image.fromarray(array).save(out, "JPEG", **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """40 photos of 90 to 160 pixels a side, as tar samples, encoded Datums in LMDB, and Examples
    in two TFRecord files that keep no keys."""
    rng = np.random.default_rng(8)
    folder = tmp_path_factory.mktemp("shuffle")
    images = []
    for i in range(40):
        h, w = int(rng.integers(90, 160)), int(rng.integers(90, 160))
        yy, xx = np.mgrid[0:h, 0:w]
        a = np.stack([(xx * 2 + i) % 256, (yy * 3) % 256, (xx + yy) % 256], -1) + rng.integers(0, 30, (h, w, 3))
        images.append(encoded(a.clip(0, 255).astype(np.uint8), quality=90))
    with tablio.writer(f"tar:{folder}/photos.tar", type="sample") as w:
        for i, jpg in enumerate(images):
            w[f"p{i:03d}"] = {"jpg": jpg, "cls": str(i % 7).encode()}
    with tablio.writer(f"lmdb:{folder}/photos_lmdb", type="datum") as w:
        for i, jpg in enumerate(images):
            w[f"p{i:03d}"] = (jpg, i % 7)
    for part in range(2):
        with tablio.writer(f"tfrecord:{folder}/photos-{part}.tfrecord", type="example") as w:
            for i in range(part * 20, part * 20 + 20):
                w.append({"image/encoded": [images[i]], "label": np.array([i % 7], np.int64)})
    return folder, images


TABLES = {
    "sample": ("tar:{}/photos.tar", "jpg"),
    "datum": ("lmdb:{}/photos_lmdb", 0),
    "example": ("tfrecord:{}/photos-*.tfrecord", "image/encoded"),
}


def dataset(folder, type, images, holds=None, **options):
    spec, _ = TABLES[type]
    options = {"batch_size": 6, "shuffle": True, "shuffle_buffer": 10, "seed": 5, "threads": 2, "with_keys": True,
               **options}
    ds = tt.TableIterableDataset(spec.format(folder), type=type, images=images, **options)
    if holds:
        ds._holds = holds
    return ds


def pixels(type, batch):
    return batch[TABLES[type][1]]


def epoch(ds, e=1, **loader):
    ds.set_epoch(e)
    return [(keys, batch) for keys, batch in tt.DataLoader(ds, batch_size=None, **loader)]


def equal(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))  # images of other sizes: a list


def same(a, b, type):
    return len(a) == len(b) and all(ka == kb and equal(pixels(type, va), pixels(type, vb))
                                    for (ka, va), (kb, vb) in zip(a, b))


@pytest.mark.parametrize("type", sorted(TABLES))
@pytest.mark.parametrize("images", [{"random_resized_crop": 96, "flip": 0.5}, True,
                                    {"resize": 80, "center_crop": 72, "mean": [0.4] * 3, "std": [0.3] * 3}])
def test_records_held_give_the_batches_values_held_give(photos, type, images):
    folder, _ = photos
    records = dataset(folder, type, images)
    assert records.shuffle_holds == "records"  # each output is larger than a record
    outputs = dataset(folder, type, images, holds="outputs")
    for e in (0, 3):
        got = epoch(records, e)
        assert same(got, epoch(outputs, e), type)
    if isinstance(images, dict) and "mean" in images:  # normalised: float32 batches, as read one by one
        keys, batch = got[0]
        assert pixels(type, batch).dtype == torch.float32
        spec = TABLES[type][0].format(folder)
        one = dict(tablio.open(spec, type=type, images=dataset(folder, type, images)._epoch_images(0, 3)))
        value = one[keys[0]]
        value = value[0] if type == "datum" else value[TABLES[type][1]]
        assert np.array_equal(pixels(type, batch)[0].numpy(), value)
    if type == "datum":
        assert all(b[1].dtype == torch.int64 for _, b in epoch(records))  # labels, stacked as read


def test_the_smaller_is_held(photos, tmp_path):
    folder, images = photos
    stored = sum(map(len, images)) / len(images)
    small = dataset(folder, "sample", {"random_resized_crop": 24})
    assert 24 * 24 * 3 < stored and small.shuffle_holds == "outputs"
    assert dataset(folder, "sample", {"random_resized_crop": 96}).shuffle_holds == "records"
    assert dataset(folder, "datum", {"crop_size": 48}).shuffle_holds == "records"  # float32: 4 bytes a value
    assert dataset(folder, "sample", {"random_resized_crop": 96}, shuffle=False).shuffle_holds is None
    assert dataset(folder, "sample", None).shuffle_holds == "outputs"
    # Records that keep their keys (key=NAME) are read as values: their keys come with them.
    with tablio.writer(f"tfrecord,key=id:{tmp_path}/keyed.tfrecord", type="example") as w:
        for i, jpg in enumerate(images[:8]):
            w[f"p{i:03d}"] = {"image/encoded": [jpg]}
    keyed = tt.TableIterableDataset(f"tfrecord,key=id:{tmp_path}/keyed.tfrecord", type="example", batch_size=4,
                                    shuffle=True, images={"random_resized_crop": 96})
    assert keyed.shuffle_holds == "outputs" and sum(len(b["image/encoded"]) for b in keyed) == 8


def test_the_buffer_holds_records_and_costs_what_they_take(photos, monkeypatch):
    folder, images = photos
    held = []

    def add(pool, indexes, keys, values):
        held.append(values)
        return original(pool, indexes, keys, values)

    original = _execute._Pool.add
    monkeypatch.setattr(_execute._Pool, "add", add)
    list(dataset(folder, "sample", {"random_resized_crop": 96, "flip": 0.5}))
    assert held and all(isinstance(v, list) and all(isinstance(r[1], bytes) for r in v) for v in held)
    assert max(len(r[1]) for v in held for r in v) <= max(map(len, images)) + 64  # a record: a member's bytes
    held.clear()
    list(dataset(folder, "sample", {"random_resized_crop": 96, "flip": 0.5}, holds="outputs"))
    assert all(isinstance(v, list) and isinstance(v[0]["jpg"], np.ndarray) for v in held)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_workers_hold_records_and_decode_as_one_process(photos, method):
    folder, _ = photos
    images = {"random_resized_crop": 96, "flip": 0.5}
    alone = epoch(dataset(folder, "sample", images))
    workers = epoch(dataset(folder, "sample", images), num_workers=2, multiprocessing_context=method)
    by_key = {k: v for keys, b in alone for k, v in zip(keys, b["jpg"])}
    got = {k: v for keys, b in workers for k, v in zip(keys, b["jpg"])}
    assert sorted(got) == sorted(by_key) and all(torch.equal(got[k], by_key[k]) for k in by_key)


def test_a_resumed_epoch_holding_records_goes_on_where_it_stopped(photos):
    folder, _ = photos
    ds = dataset(folder, "datum", {"random_resized_crop": 96, "flip": 0.5})
    whole = list(tt.DataLoader(ds, batch_size=None))
    loader = tt.DataLoader(ds, batch_size=None)
    it = iter(loader)
    for _ in range(2):
        next(it)
    resumed = tt.DataLoader(ds, batch_size=None)
    resumed.load_state_dict(loader.state_dict())
    rest = list(resumed)
    assert len(rest) == len(whole) - 2
    assert all(a[0] == b[0] and torch.equal(a[1][0], b[1][0]) for a, b in zip(rest, whole[2:]))


def test_a_bad_image_held_as_a_record_is_skipped_or_raised_by_its_key(tmp_path, photos):
    _, images = photos
    with tablio.writer(f"tar:{tmp_path}/bad.tar", type="sample") as w:
        for i, jpg in enumerate(images[:12]):
            w[f"q{i:02d}"] = {"jpg": jpg[: len(jpg) // 2] if i == 5 else jpg, "cls": b"1"}
    images = {"random_resized_crop": 96}
    options = {"batch_size": 4, "shuffle": True, "shuffle_buffer": 6, "seed": 1, "with_keys": True}
    ds = tt.TableIterableDataset(f"tar:{tmp_path}/bad.tar", type="sample", images=images, **options)
    assert ds.shuffle_holds == "records"
    with pytest.raises(tablio.FormatError) as raised:
        list(ds)
    assert raised.value.key == "q05" and "bad.tar" in raised.value.path
    with pytest.raises(tablio.FormatError) as read_in_order:  # the offset the table names
        list(tablio.open(f"tar:{tmp_path}/bad.tar", type="sample", images=images))
    assert raised.value.offset == read_in_order.value.offset and raised.value.offset is not None
    assert raised.value.path == read_in_order.value.path
    skipping = tt.TableIterableDataset(f"tar:{tmp_path}/bad.tar", type="sample", images=images, on_error="skip",
                                       **options)
    with pytest.warns(RuntimeWarning, match="q05"):
        got = list(skipping)
    assert skipping.skipped == 1 and sum(len(k) for k, _ in got) == 11 and "q05" not in {k for ks, _ in got for k in ks}
    skipping._holds = "outputs"
    with pytest.warns(RuntimeWarning, match="q05"):
        expected = list(skipping)
    assert same(got, expected, "sample")
