"""images='s training transforms: torchvision's names and Caffe's transform_param, checked when
a table is opened and handed to the C++ reader as one dict (docs/images.md)."""

import numbers
import os

TORCHVISION = ("random_resized_crop", "flip", "resize", "center_crop", "mean", "std", "dct_scaling")
CAFFE = ("crop_size", "mirror", "mean_value", "mean_file", "scale", "train")
KEYS = TORCHVISION + CAFFE + ("seed",)


def _size(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 < v < 2**16:
        raise ValueError(f"{name} is a size in pixels, 1 to 65535, not {v!r}")
    return int(v)


def _pair(name, v, low, high):
    if (isinstance(v, (str, bytes)) or not hasattr(v, "__len__") or len(v) != 2
            or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v)):
        raise ValueError(f"random_resized_crop's {name} is [low, high], not {v!r}")
    lo, hi = float(v[0]), float(v[1])
    if not low < lo <= hi <= high:
        raise ValueError(f"random_resized_crop's {name} is [low, high] with {low} < low <= high <= {high}, not {v!r}")
    return lo, hi


def _floats(name, v, nonzero=False):
    v = [v] if isinstance(v, numbers.Real) and not isinstance(v, bool) else v
    if (isinstance(v, (str, bytes)) or not hasattr(v, "__len__") or len(v) not in (1, 3)
            or not all(isinstance(x, numbers.Real) and not isinstance(x, bool) for x in v)):
        raise ValueError(f"{name} is a number or one per channel (3), not {v!r}")
    if nonzero and any(float(x) == 0 for x in v):
        raise ValueError(f"{name} has no zero, not {v!r}")
    return [float(x) for x in v]


def _random_resized_crop(v):
    if not isinstance(v, dict):
        return (_size("random_resized_crop", v), 0.08, 1.0, 3 / 4, 4 / 3)
    if set(v) - {"size", "scale", "ratio"} or "size" not in v:
        raise ValueError(f"random_resized_crop is a size or a dict of size, scale and ratio, not {v!r}")
    scale = _pair("scale", v.get("scale", (0.08, 1.0)), 0, 1)
    ratio = _pair("ratio", v.get("ratio", (3 / 4, 4 / 3)), 0, float("inf"))
    return (_size("random_resized_crop's size", v["size"]),) + scale + ratio


def parse(given, channels):
    """The transform images= names, as the C++ reader takes it (a dict), or None. `given` is
    images='s dict; `channels` what it decodes (0: as stored). ValueError says what is wrong."""
    named = {k: given[k] for k in KEYS if k in given}
    seed = named.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**64:
        raise ValueError(f"seed is an integer, 0 to 2**64 - 1, not {seed!r}")
    if not set(named) - {"seed"}:
        return None
    torchvision = [k for k in named if k in TORCHVISION]
    caffe = [k for k in named if k in CAFFE]
    if torchvision and caffe:
        raise ValueError(f"images takes torchvision's transforms or Caffe's transform_param, not both "
                         f"({', '.join(torchvision)} with {', '.join(caffe)})")
    out = {"seed": int(seed)}
    if caffe:
        out["caffe"] = True
        if "crop_size" in named:
            out["crop_size"] = _size("crop_size", named["crop_size"])
        out["mirror"] = _flag("mirror", named.get("mirror", False))
        out["train"] = _flag("train", named.get("train", True))
        if "mean_value" in named and "mean_file" in named:
            raise ValueError("give mean_file or mean_value, not both (Caffe refuses both at once)")
        if "mean_value" in named:
            out["mean_value"] = _floats("mean_value", named["mean_value"])
        if "mean_file" in named:
            path = os.fspath(named["mean_file"])
            with open(path, "rb") as f:
                out["mean_file"] = (path, f.read())
        if "scale" in named:
            scale = named["scale"]
            if isinstance(scale, bool) or not isinstance(scale, numbers.Real):
                raise ValueError(f"scale is a number, not {scale!r}")
            out["scale"] = float(scale)
        return out
    if "random_resized_crop" in named:
        if "resize" in named or "center_crop" in named:
            raise ValueError("random_resized_crop (training) is not taken with resize or center_crop (evaluation)")
        out["random_resized_crop"] = _random_resized_crop(named["random_resized_crop"])
    for k in ("resize", "center_crop"):
        if k in named:
            out[k] = _size(k, named[k])
    if "flip" in named:
        flip = named["flip"]
        flip = 0.5 if flip is True else 0.0 if flip is False else flip
        if not isinstance(flip, numbers.Real) or not 0 <= flip <= 1:
            raise ValueError(f"flip is the probability of a horizontal flip, 0 to 1 (True: 0.5), not {named['flip']!r}")
        out["flip"] = float(flip)
    # Decoding at a DCT scale changes the pixels a little: by default for training alone, where the
    # crops' own randomness is far larger, and evaluation sees torchvision's pixels exactly.
    out["dct_scaling"] = _flag("dct_scaling", named.get("dct_scaling", "random_resized_crop" in named))
    if ("mean" in named) != ("std" in named):
        raise ValueError("mean and std go together (Normalize(mean, std) after ToTensor())")
    if "mean" in named:
        out["mean"], out["std"] = _floats("mean", named["mean"]), _floats("std", named["std"], nonzero=True)
        if channels == 1 and (len(out["mean"]) == 3 or len(out["std"]) == 3):
            raise ValueError("mean and std of 3 channels for gray images (channels=1)")
    return out


def _flag(name, v):
    if not isinstance(v, bool):
        raise ValueError(f"{name} is True or False, not {v!r}")
    return v


def output_bytes(images, type):
    """The bytes of one record's image as images= gives it, where its transform fixes its size (a
    crop): None where it follows the stored image (no transform, or a resize alone)."""
    if not isinstance(images, dict):
        return None
    channels = images.get("channels", 3) or 3
    if any(k in images for k in CAFFE):
        side = images.get("crop_size")
        return side * side * channels * 4 if side else None  # float32
    crop = images.get("random_resized_crop", images.get("center_crop"))
    if isinstance(crop, dict):
        crop = crop.get("size")
    if not crop:
        return None
    return crop * crop * channels * (4 if "mean" in images else 1)


def seed_of(images):
    """The seed of images='s transform (0 when it names none)."""
    return int(images.get("seed", 0)) if isinstance(images, dict) else 0


def with_seed(images, seed):
    """images= with its transform's seed replaced by `seed` (a dataset's, per epoch and table),
    the seed it names mixed in; images= unchanged when it draws nothing."""
    if not isinstance(images, dict) or not set(images) & set(KEYS) - {"seed"}:
        return images
    return dict(images, seed=(seed ^ (int(images.get("seed", 0)) * 0x9E3779B97F4A7C15)) % 2**64)
