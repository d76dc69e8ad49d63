#!/usr/bin/python3
"""Makes the images of tests/data/images with Pillow (python3-pil 9.4, libjpeg-turbo 2.1.5), and
for each the pixels Pillow decodes from it (Image.open(f).convert(mode), after draft(mode, size)
for the .draft files) as raw uint8 (H, W, C) bytes, which tests compare tablio's decoding with.
Run in this folder: ./make.py"""
import io
import json
import numpy as np
from PIL import Image

yy, xx = np.mgrid[0:48, 0:64]
rng = np.random.default_rng(5)
base = np.stack([(xx * 4) % 256, (yy * 5) % 256, ((xx + yy) * 3) % 256], -1)
base = (base + rng.integers(0, 24, base.shape)).clip(0, 255).astype(np.uint8)
im = Image.fromarray(base)
large = im.resize((160, 120))
expect = {}


def save(name, image, fmt, **options):
    image.save(name, fmt, **options)


def pixels(name, mode, draft=None):
    image = Image.open(name)
    if draft:
        image.draft(mode, draft)
    a = np.asarray(image.convert(mode))
    return a


def record(name, mode="RGB", draft=None):
    a = pixels(name, mode, draft)
    out = name + (f".draft{draft[0]}x{draft[1]}" if draft else "") + "." + mode.lower()
    open(out, "wb").write(a.tobytes())
    expect[out] = list(a.shape)


save("q90.jpg", large, "JPEG", quality=90)
save("q75-444.jpg", large, "JPEG", quality=75, subsampling=0)
save("progressive.jpg", large, "JPEG", quality=85, progressive=True)
save("gray.jpg", large.convert("L"), "JPEG", quality=90)
save("cmyk.jpg", large.convert("CMYK"), "JPEG", quality=90)
save("rgb.png", im, "PNG")
save("rgba.png", im.convert("RGBA"), "PNG")
save("palette.png", im.convert("P"), "PNG")
save("bilevel.png", im.convert("1"), "PNG")
save("gray-alpha.png", im.convert("LA"), "PNG")
Image.fromarray((base[..., 0].astype(np.uint16) * 257)).save("gray16.png")
for name in ["q90.jpg", "q75-444.jpg", "progressive.jpg", "gray.jpg", "rgb.png", "rgba.png", "palette.png",
             "bilevel.png", "gray-alpha.png"]:
    record(name)
for name in ["gray.jpg", "bilevel.png", "gray-alpha.png"]:
    record(name, "L")
for name, draft in [("q90.jpg", (40, 30)), ("q90.jpg", (64, 64)), ("progressive.jpg", (20, 15)),
                    ("gray.jpg", (80, 60))]:
    record(name, "RGB", draft)
json.dump(expect, open("pixels.json", "w"), indent=1, sort_keys=True)
