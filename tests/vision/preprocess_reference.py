#!/usr/bin/env python3
"""Reference pixel_values for web/test/vision-preprocess.test.js, computed with Pillow and numpy
the way the transformers library's ViT, DeiT and Bit image processors compute them:

  Image.convert("RGB") (drops alpha)  ->  Image.resize(size, resample)  ->  centre crop (zero
  padding where the image is smaller)  ->  x.astype(float64) * rescale_factor as float32  ->
  (x - mean) / std in float32  ->  channels first.

For each case it writes, into OUT_DIR: case-N.rgba (the seeded input, RGBA bytes), case-N.json
(the preprocessor_config.json), case-N.resized (the RGB bytes after Pillow's resize) and
case-N.f32 (pixel_values, little-endian float32), and cases.json listing them.

  /usr/bin/python3 tests/vision/preprocess_reference.py OUT_DIR
"""

import json
import math
import os
import sys

import numpy as np
from PIL import Image

IMAGENET_DEFAULT_MEAN = [0.485, 0.456, 0.406]
IMAGENET_DEFAULT_STD = [0.229, 0.224, 0.225]

# (input width, height, preprocessor_config.json): Hub-shaped configs, down and up scaling, both
# filters, crops inside and larger than the resized image.
CASES = [
    (300, 200, {"feature_extractor_type": "ViTFeatureExtractor", "do_resize": True, "size": 224,
                "resample": 2, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
                "image_std": [0.5, 0.5, 0.5]}),
    (50, 40, {"feature_extractor_type": "ViTFeatureExtractor", "do_resize": True, "size": 224,
              "resample": 2, "do_normalize": True, "image_mean": IMAGENET_DEFAULT_MEAN,
              "image_std": IMAGENET_DEFAULT_STD}),
    (640, 480, {"image_processor_type": "BitImageProcessor", "crop_size": {"height": 224, "width": 224},
                "do_center_crop": True, "do_convert_rgb": True, "do_normalize": True,
                "do_rescale": True, "do_resize": True, "image_mean": IMAGENET_DEFAULT_MEAN,
                "image_std": IMAGENET_DEFAULT_STD, "resample": 3,
                "rescale_factor": 0.00392156862745098, "size": {"shortest_edge": 256}}),
    (97, 131, {"feature_extractor_type": "DeiTFeatureExtractor", "crop_size": 224,
               "do_center_crop": True, "do_normalize": True, "do_resize": True,
               "image_mean": IMAGENET_DEFAULT_MEAN, "image_std": IMAGENET_DEFAULT_STD,
               "resample": 3, "size": 256}),
    (45, 33, {"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 20},
              "crop_size": {"height": 30, "width": 23}, "resample": 2,
              "image_mean": [0.3, 0.4, 0.5], "image_std": [0.2, 0.25, 0.3]}),
    (33, 70, {"image_processor_type": "BitImageProcessor", "size": {"shortest_edge": 16},
              "crop_size": {"height": 16, "width": 16}, "resample": 3, "do_normalize": False}),
    (24, 17, {"image_processor_type": "ViTImageProcessor", "do_resize": False,
              "rescale_factor": 0.5, "do_normalize": True}),
]

VIT_DEFAULTS = dict(do_resize=True, size={"height": 224, "width": 224}, resample=2,
                    do_center_crop=False, do_rescale=True, rescale_factor=1 / 255,
                    do_normalize=True, image_mean=[0.5] * 3, image_std=[0.5] * 3)
DEIT_DEFAULTS = dict(VIT_DEFAULTS, size={"height": 256, "width": 256}, resample=3,
                     do_center_crop=True, crop_size={"height": 224, "width": 224})
BIT_DEFAULTS = dict(DEIT_DEFAULTS, size={"shortest_edge": 224},
                    image_mean=[0.48145466, 0.4578275, 0.40821073],
                    image_std=[0.26862954, 0.26130258, 0.27577711])
DEFAULTS = {"ViTImageProcessor": VIT_DEFAULTS, "ViTFeatureExtractor": VIT_DEFAULTS,
            "DeiTFeatureExtractor": DEIT_DEFAULTS, "BitImageProcessor": BIT_DEFAULTS}


def size_dict(size, square):
    if isinstance(size, int):
        return {"height": size, "width": size} if square else {"shortest_edge": size}
    return size


def seeded_image(seed, width, height):
    """Smooth shapes plus noise, so both the filters' lobes and their averaging matter."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([128 + 100 * np.sin(x / (3 + c) + y / (5 + 2 * c) + c) for c in range(3)], -1)
    noisy = base + rng.normal(0, 40, base.shape)
    rgb = np.clip(noisy, 0, 255).astype(np.uint8)
    alpha = rng.integers(0, 256, (height, width, 1), dtype=np.uint8)
    return np.concatenate([rgb, alpha], -1)


def preprocess(rgba, config):
    processor = config.get("image_processor_type") or config.get("feature_extractor_type")
    c = dict(DEFAULTS[processor], **config)
    square = processor != "BitImageProcessor"
    image = Image.fromarray(rgba, "RGBA").convert("RGB")
    if c["do_resize"]:
        size = size_dict(c["size"], square)
        if "shortest_edge" in size:
            width, height = image.size
            short, long = (width, height) if width <= height else (height, width)
            new_long = int(size["shortest_edge"] * long / short)
            new_w, new_h = ((size["shortest_edge"], new_long) if width <= height
                            else (new_long, size["shortest_edge"]))
        else:
            new_w, new_h = size["width"], size["height"]
        image = image.resize((new_w, new_h), resample=c["resample"])
    resized = np.array(image)
    x = resized
    if processor != "ViTImageProcessor" and processor != "ViTFeatureExtractor" and c["do_center_crop"]:
        crop = size_dict(c["crop_size"], True)
        x = center_crop(x, crop["height"], crop["width"])
    if c["do_rescale"]:
        x = (x.astype(np.float64) * c["rescale_factor"]).astype(np.float32)
    else:
        x = x.astype(np.float32)
    if c["do_normalize"]:
        mean = np.array(c["image_mean"], dtype=np.float32)
        std = np.array(c["image_std"], dtype=np.float32)
        x = (x - mean) / std
    return resized, np.ascontiguousarray(x.transpose(2, 0, 1), dtype=np.float32)


def center_crop(image, crop_h, crop_w):
    """transformers' center_crop on an HWC array, padding path included."""
    h, w = image.shape[:2]
    top, left = (h - crop_h) // 2, (w - crop_w) // 2
    if top >= 0 and left >= 0 and top + crop_h <= h and left + crop_w <= w:
        return image[top:top + crop_h, left:left + crop_w]
    new_h, new_w = max(crop_h, h), max(crop_w, w)
    padded = np.zeros((new_h, new_w, image.shape[2]), dtype=image.dtype)
    top_pad, left_pad = math.ceil((new_h - h) / 2), math.ceil((new_w - w) / 2)
    padded[top_pad:top_pad + h, left_pad:left_pad + w] = image
    top, left = top + top_pad, left + left_pad
    return padded[max(0, top):min(new_h, top + crop_h), max(0, left):min(new_w, left + crop_w)]


def main(out):
    os.makedirs(out, exist_ok=True)
    listing = []
    for i, (width, height, config) in enumerate(CASES):
        rgba = seeded_image(i + 1, width, height)
        resized, values = preprocess(rgba, config)
        rgba.tofile(os.path.join(out, f"case-{i}.rgba"))
        resized.tofile(os.path.join(out, f"case-{i}.resized"))
        values.astype("<f4").tofile(os.path.join(out, f"case-{i}.f32"))
        with open(os.path.join(out, f"case-{i}.json"), "w") as f:
            json.dump(config, f)
        listing.append(dict(name=f"case-{i}", width=width, height=height,
                            resized=list(resized.shape[:2]), shape=list(values.shape)))
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump(listing, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
