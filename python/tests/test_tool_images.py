"""tablio copy --images: a table of encoded images (WebDataset samples, encoded Datums, Examples)
written as raw Datums of their decoded, transformed pixels, which must be what Python's images=
gives for the same records, transform and seed: the tool and Python meet on the same data."""
import io
import os
import subprocess

import pytest
from conftest import program_environment

np = pytest.importorskip("numpy")
Image = pytest.importorskip("PIL.Image")
tablio = pytest.importorskip("tablio")

TOOL = os.environ.get("TABLIO_TOOL")
pytestmark = pytest.mark.skipif(not TOOL, reason="TABLIO_TOOL names the tool (set by the build's tests)")


def encoded(array, fmt="JPEG", **options):
    out = io.BytesIO()
    Image.fromarray(array).save(out, fmt, **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def shard(tmp_path_factory):
    """WebDataset samples of 240 to 330 pixels a side, one PNG, each with its cls."""
    rng = np.random.default_rng(5)
    folder = tmp_path_factory.mktemp("tool_images")
    samples = {}
    for i in range(12):
        h, w = int(rng.integers(240, 330)), int(rng.integers(240, 330))
        yy, xx = np.mgrid[0:h, 0:w]
        a = (np.stack([(xx * 3 + i) % 256, (yy * 2) % 256, (xx + yy) % 256], -1) + rng.integers(0, 40, (h, w, 3)))
        a = a.clip(0, 255).astype(np.uint8)
        image = ("png", encoded(a, "PNG")) if i == 4 else ("jpg", encoded(a, quality=90))
        samples[f"img{i:02d}"] = {image[0]: image[1], "cls": f"{i % 5}\n".encode()}
    with tablio.writer(f"tar:{folder}/shard.tar", type="sample") as w:
        for key, sample in samples.items():
            w[key] = sample
    return folder, samples


def tool(*args, ok=True):
    run = subprocess.run([TOOL, *map(str, args)], capture_output=True, text=True, timeout=120,
                         env=program_environment())
    if ok:
        assert run.returncode == 0, run.stderr
    return run


def datums(rspec):
    """{key: (array (C, H, W), label)} as Python reads the raw Datums the tool wrote."""
    return {key: value for key, value in tablio.open(rspec, type="datum")}


def python_images(rspec, type, images, key_of=lambda k: k):
    out = {}
    for key, value in tablio.open(rspec, type=type, images=images):
        if type == "sample":
            out[key] = value.get("jpg", value.get("png"))
        elif type == "datum":
            out[key] = value[0]
        else:
            out[key] = value["image/encoded"]
    return out


@pytest.mark.parametrize("threads", [1, 2])
def test_eval_transform_from_samples_equals_pythons_images(shard, threads):
    folder, samples = shard
    tool("copy", "--type=sample", "--images", "--resize=128", "--center-crop=112", f"--threads={threads}",
         f"tar:{folder}/shard.tar", f"lmdb:{folder}/eval_lmdb_{threads}")
    written = datums(f"lmdb:{folder}/eval_lmdb_{threads}")
    expected = python_images(f"tar:{folder}/shard.tar", "sample",
                             {"resize": 128, "center_crop": 112, "channels_first": True, "bgr": True})
    assert sorted(written) == sorted(samples)
    for key, (pixels, label) in written.items():
        assert pixels.dtype == np.uint8 and pixels.shape == (3, 112, 112)
        assert np.array_equal(pixels, expected[key]), key
        assert label == int(samples[key]["cls"])


def test_training_draws_follow_the_seed_and_key_as_pythons(shard):
    folder, _ = shard
    options = ["--random-resized-crop=64", "--flip=0.5", "--seed=9"]
    tool("copy", "--type=sample", "--images", *options, "--threads=2", f"tar:{folder}/shard.tar",
         f"tfrecord:{folder}/train.tfrecord")
    written = datums(f"tfrecord:{folder}/train.tfrecord")
    expected = python_images(f"tar:{folder}/shard.tar", "sample",
                             {"random_resized_crop": 64, "flip": 0.5, "seed": 9, "bgr": True})
    assert all(np.array_equal(written[k][0], expected[k]) for k in expected)
    tool("copy", "--type=sample", "--images", "--random-resized-crop=64", "--flip=0.5", "--seed=10",
         f"tar:{folder}/shard.tar", f"ark:{folder}/other.ark")
    other = datums(f"ark:{folder}/other.ark")
    assert any(not np.array_equal(other[k][0], written[k][0]) for k in written)  # another seed, other draws


def test_normalised_floats_go_to_float_data(shard):
    folder, _ = shard
    mean, std = "0.485,0.456,0.406", "0.229,0.224,0.225"
    tool("copy", "--type=sample", "--images", "--resize=80", "--center-crop=64", f"--mean={mean}", f"--std={std}",
         f"tar:{folder}/shard.tar", f"ark:{folder}/floats.ark")
    written = datums(f"ark:{folder}/floats.ark")
    expected = python_images(f"tar:{folder}/shard.tar", "sample",
                             {"resize": 80, "center_crop": 64, "mean": [0.485, 0.456, 0.406],
                              "std": [0.229, 0.224, 0.225], "bgr": True})
    # Normalize's mean and std name R, G, B, whatever order the channels are stored in.
    rgb = python_images(f"tar:{folder}/shard.tar", "sample",
                        {"resize": 80, "center_crop": 64, "mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]})
    for key, (values, _) in written.items():
        assert values.dtype == np.float32 and values.shape == (3, 64, 64)
        assert np.array_equal(values, expected[key])
        assert np.array_equal(values[::-1], rgb[key])


@pytest.fixture(scope="module")
def encoded_lmdb(shard):
    """The same images as encoded Datums (convert_imageset --encoded), and as raw ones."""
    folder, samples = shard
    with tablio.writer(f"lmdb:{folder}/encoded_lmdb", type="datum") as enc, \
            tablio.writer(f"lmdb:{folder}/raw_lmdb", type="datum") as raw:
        for key, sample in samples.items():
            data = sample.get("jpg", sample.get("png"))
            enc[key] = (data, int(sample["cls"]))
            pixels = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))[..., ::-1].transpose(2, 0, 1)
            raw[key] = (np.ascontiguousarray(pixels), int(sample["cls"]))
    return folder


@pytest.mark.parametrize("source", ["encoded_lmdb", "raw_lmdb"])
def test_caffe_transform_param_from_datums_equals_pythons(encoded_lmdb, source):
    folder = encoded_lmdb
    tool("copy", "--type=datum", "--images", "--crop-size=227", "--mirror", "--mean-value=104,117,123",
         "--scale=0.017", "--train=false", f"lmdb:{folder}/{source}", f"lmdb:{folder}/caffe_{source}")
    written = datums(f"lmdb:{folder}/caffe_{source}")
    expected = python_images(f"lmdb:{folder}/{source}", "datum",
                             {"crop_size": 227, "mirror": True, "mean_value": [104, 117, 123], "scale": 0.017,
                              "train": False})
    labels = {k: v[1] for k, v in tablio.open(f"lmdb:{folder}/{source}", type="datum")}
    for key, (values, label) in written.items():
        assert values.dtype == np.float32 and values.shape == (3, 227, 227)
        assert np.array_equal(values, expected[key])
        assert label == labels[key]


def test_raw_datums_without_a_transform_are_copied_as_they_are(encoded_lmdb):
    folder = encoded_lmdb
    tool("copy", "--type=datum", "--images", f"lmdb:{folder}/raw_lmdb", f"lmdb:{folder}/raw_again")
    tool("copy", "--type=datum", "--images", f"lmdb:{folder}/encoded_lmdb", f"lmdb:{folder}/decoded_lmdb")
    again, decoded = datums(f"lmdb:{folder}/raw_again"), datums(f"lmdb:{folder}/decoded_lmdb")
    for key, (pixels, label) in datums(f"lmdb:{folder}/raw_lmdb").items():
        assert np.array_equal(again[key][0], pixels) and again[key][1] == label
        assert np.array_equal(decoded[key][0], pixels) and decoded[key][1] == label  # Pillow's pixels, BGR


def test_examples_image_and_label_as_tensorflows_imagenet_records(shard):
    folder, samples = shard
    with tablio.writer(f"tfrecord,key=key:{folder}/examples.tfrecord", type="example") as w:
        for key, sample in samples.items():
            w[key] = {"image/encoded": [sample.get("jpg", sample.get("png"))],
                      "image/class/label": np.array([int(sample["cls"]) + 1], np.int64)}
    # Keys kept in a feature: the draws follow them, not the records' numbers, as Python's do.
    options = ["--random-resized-crop=40", "--flip=0.5", "--seed=3"]
    tool("copy", "--type=example", "--images", *options, "--threads=2",
         f"tfrecord,key=key:{folder}/examples.tfrecord", f"ark:{folder}/from_examples.ark")
    written = datums(f"ark:{folder}/from_examples.ark")
    expected = python_images(f"tar:{folder}/shard.tar", "sample",
                             {"random_resized_crop": 40, "flip": 0.5, "seed": 3, "bgr": True})
    assert sorted(written) == sorted(samples)
    for key, (pixels, label) in written.items():
        assert np.array_equal(pixels, expected[key]), key
        assert label == int(samples[key]["cls"]) + 1
    keyed = python_images(f"tfrecord,key=key:{folder}/examples.tfrecord", "example",
                          {"random_resized_crop": 40, "flip": 0.5, "seed": 3, "bgr": True})
    assert all(np.array_equal(keyed[k], expected[k]) for k in expected)


def test_gray_images_to_one_channel(tmp_path):
    rng = np.random.default_rng(2)
    with tablio.writer(f"tar:{tmp_path}/gray.tar", type="sample") as w:
        for i in range(4):
            w[f"g{i}"] = {"jpg": encoded(rng.integers(0, 255, (60 + i, 70), dtype=np.uint8), quality=90)}
    tool("copy", "--type=sample", "--images", "--gray", "--resize=50", "--center-crop=40",
         f"tar:{tmp_path}/gray.tar", f"ark:{tmp_path}/gray.ark")
    written = datums(f"ark:{tmp_path}/gray.ark")
    expected = python_images(f"tar:{tmp_path}/gray.tar", "sample", {"channels": 1, "resize": 50, "center_crop": 40})
    for key, (pixels, label) in written.items():
        assert pixels.shape == (1, 40, 40) and label == 0  # no cls: label 0
        assert np.array_equal(pixels[0], expected[key].reshape(40, 40))


def test_bad_images_are_errors_naming_file_and_key(tmp_path):
    good = encoded(np.zeros((40, 40, 3), np.uint8), quality=90)
    with tablio.writer(f"tar:{tmp_path}/bad.tar", type="sample") as w:
        w["fine"] = {"jpg": good, "cls": b"1"}
        w["cut"] = {"jpg": good[: len(good) // 2], "cls": b"2"}
    run = tool("copy", "--type=sample", "--images", f"tar:{tmp_path}/bad.tar", f"ark:{tmp_path}/out.ark", ok=False)
    assert run.returncode != 0 and "bad.tar" in run.stderr and "cut" in run.stderr
    with pytest.raises(tablio.FormatError) as in_python:  # the same place as Python names
        list(tablio.open(f"tar:{tmp_path}/bad.tar", type="sample", images=True))
    assert f"at byte {in_python.value.offset} " in run.stderr, (run.stderr, in_python.value.offset)
    with tablio.writer(f"tar:{tmp_path}/none.tar", type="sample") as w:
        w["text"] = {"txt": b"no image", "cls": b"1"}
    run = tool("copy", "--type=sample", "--images", f"tar:{tmp_path}/none.tar", f"ark:{tmp_path}/o.ark", ok=False)
    assert run.returncode != 0 and "text" in run.stderr and "image member" in run.stderr
    with tablio.writer(f"tar:{tmp_path}/cls.tar", type="sample") as w:
        w["odd"] = {"jpg": good, "cls": b"dog"}
    run = tool("copy", "--type=sample", "--images", f"tar:{tmp_path}/cls.tar", f"ark:{tmp_path}/o.ark", ok=False)
    assert run.returncode != 0 and "odd" in run.stderr and "cls" in run.stderr


@pytest.mark.parametrize("options, message", [
    (["--resize=10"], "apply with --images"),
    (["--images", "--resize=0"], "1 to 65535"),
    (["--images", "--resize=10", "--crop-size=5"], "not both"),
    (["--images", "--random-resized-crop=10", "--center-crop=5"], "not taken with"),
    (["--images", "--mean=0.5"], "go together"),
    (["--images", "--flip=2"], "probability"),
    (["--images", "--random-resized-crop=10", "--crop-scale=0.5"], "2 comma-separated"),
    (["--images", "--crop-size=9", "--mean-value=1", "--mean-file=m"], "not both"),
    (["--images", "--type=matrix"], "--type=matrix"),
])
def test_options_are_checked_before_anything_is_read(tmp_path, options, message):
    run = tool("copy", "--type=sample", *options, f"tar:{tmp_path}/absent.tar", f"ark:{tmp_path}/o.ark", ok=False)
    assert run.returncode != 0 and message in run.stderr
