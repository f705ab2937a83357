#!/usr/bin/env python3
"""An independent reference forward pass for the tiny vision models (tests/models/
make_tiny_vit.py), in plain torch ops (float64), written from the transformers library's
modelling code (ViTForImageClassification, ViTModel, Dinov2Model, Dinov2WithRegistersModel), not
from attnlens' C++.

The image goes through tests/vision/preprocess_reference.py (Pillow and numpy, as the library's
image processors do) with the folder's preprocessor_config.json.

Reads one JSON request on stdin and writes one JSON answer on stdout:

  request  {"cases": [{"folder": ..., "rgba": path of RGBA bytes, "width": W, "height": H,
                       "windows": optional [one per layer: null (full attention) or K, a
                                  K x K local window over the patch grid]}]}
  answer   {"cases": [{"grid": [rows, cols] of patches,
                       "pixel_values": [3 * height * width floats],
                       "attention": [layers * heads * N * N floats] (N = 1 + registers +
                                     rows * cols),
                       "last_hidden_state": [N * hidden floats] (after the final layernorm),
                       "hidden_states": [(layers + 1) * N * hidden floats]: the embeddings and
                                        each layer's output, before the final layernorm (the
                                        library's output_hidden_states),
                       "pooled": [hidden floats] | null (ViTModel's pooler: tanh(dense(class
                                 token)); Dinov2Model's: the class token),
                       "logits": [labels floats] | null}]}

A K x K window lets patch (r, c) see the patches (r', c') with |r - r'| <= (K - 1) / 2 and
|c - c'| <= (K - 1) / 2; the class token and registers see and are seen by every token. It is
added to the scores as -inf before the softmax, as windowed ViTs (Swin, ViTDet) mask.
"""

import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "vision"))
from reference import gelu, layer_norm, load_state  # noqa: E402
from preprocess_reference import preprocess  # noqa: E402


def linear(x, w, name):
    return x @ w[name + ".weight"].T + w[name + ".bias"]


def patch_embeddings(pixels, w, prefix, patch):
    """Conv2d with kernel = stride = patch, flattened row by row into tokens."""
    conv = F.conv2d(pixels[None], w[prefix + "projection.weight"], w[prefix + "projection.bias"],
                    stride=patch)
    return conv.flatten(2).transpose(1, 2)[0]


def interpolated_positions(positions, rows, cols, antialias):
    """Dinov2Embeddings.interpolate_pos_encoding: the patch positions as a square grid, resized
    with bicubic interpolation (align_corners=False; Dinov2WithRegistersEmbeddings' with
    antialias=True) to rows x cols; unchanged when they match."""
    count = positions.shape[0] - 1
    if count == rows * cols and rows == cols:
        return positions
    side = int(math.sqrt(count))
    grid = positions[1:].reshape(1, side, side, -1).permute(0, 3, 1, 2)
    grid = F.interpolate(grid, size=(rows, cols), mode="bicubic", align_corners=False,
                         antialias=antialias)
    return torch.cat([positions[:1], grid.permute(0, 2, 3, 1).reshape(rows * cols, -1)])


def window_bias(rows, cols, first, k):
    """The additive mask [N, N] of a K x K patch window: 0 where a query sees a key, -inf
    elsewhere."""
    reach = (k - 1) // 2
    r = torch.arange(rows).repeat_interleave(cols)
    c = torch.arange(cols).repeat(rows)
    near = ((r[:, None] - r[None, :]).abs() <= reach) & ((c[:, None] - c[None, :]).abs() <= reach)
    n = first + rows * cols
    seen = torch.ones(n, n, dtype=torch.bool)
    seen[first:, first:] = near
    bias = torch.zeros(n, n, dtype=torch.float64)
    return bias.masked_fill(~seen, float("-inf"))


def attention(x, w, prefix, heads, bias):
    n, hidden = x.shape
    d = hidden // heads

    def split(name):
        return linear(x, w, prefix + "attention.attention." + name).view(n, heads, d).transpose(0, 1)

    q, k, v = split("query"), split("key"), split("value")
    scores = q @ k.transpose(1, 2) / math.sqrt(d)
    if bias is not None:
        scores = scores + bias
    probs = torch.softmax(scores, dim=-1)
    context = (probs @ v).transpose(0, 1).reshape(n, hidden)
    return linear(context, w, prefix + "attention.output.dense"), probs


def encoder(config, w, prefix, pixels, dinov2, registers, windows):
    patch, eps, heads = config["patch_size"], config["layer_norm_eps"], config["num_attention_heads"]
    rows, cols = pixels.shape[1] // patch, pixels.shape[2] // patch
    tokens = patch_embeddings(pixels, w, prefix + "embeddings.patch_embeddings.", patch)
    x = torch.cat([w[prefix + "embeddings.cls_token"][0], tokens])
    positions = w[prefix + "embeddings.position_embeddings"][0]
    if dinov2:
        positions = interpolated_positions(positions, rows, cols, antialias=registers)
    elif positions.shape[0] != x.shape[0]:
        raise ValueError("ViT runs at its trained size (interpolate_pos_encoding is off)")
    x = x + positions
    if registers:  # after the positions, as Dinov2WithRegistersEmbeddings adds them
        x = torch.cat([x[:1], w[prefix + "embeddings.register_tokens"][0], x[1:]])
    attentions, states = [], [x]
    for n in range(config["num_hidden_layers"]):
        p = f"{prefix}encoder.layer.{n}."
        norm1, norm2 = ("norm1", "norm2") if dinov2 else ("layernorm_before", "layernorm_after")
        h = layer_norm(x, w[p + norm1 + ".weight"], w[p + norm1 + ".bias"], eps)
        k = windows[n] if windows else None
        first = 1 + (w[prefix + "embeddings.register_tokens"].shape[1] if registers else 0)
        bias = None if k is None else window_bias(rows, cols, first, k)
        out, probs = attention(h, w, p, heads, bias)
        attentions.append(probs)
        x = x + (out * w[p + "layer_scale1.lambda1"] if dinov2 else out)
        h = layer_norm(x, w[p + norm2 + ".weight"], w[p + norm2 + ".bias"], eps)
        up, down = ("mlp.fc1", "mlp.fc2") if dinov2 else ("intermediate.dense", "output.dense")
        h = linear(gelu(linear(h, w, p + up)), w, p + down)
        x = x + (h * w[p + "layer_scale2.lambda1"] if dinov2 else h)
        states.append(x)
    x = layer_norm(x, w[prefix + "layernorm.weight"], w[prefix + "layernorm.bias"], eps)
    return (rows, cols), torch.stack(attentions), torch.stack(states), x


def run_case(case):
    folder = case["folder"]
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    with open(os.path.join(folder, "preprocessor_config.json"), encoding="utf-8") as f:
        preprocessor = json.load(f)
    rgba = np.fromfile(case["rgba"], dtype=np.uint8).reshape(case["height"], case["width"], 4)
    _, pixel_values = preprocess(rgba, preprocessor)
    pixels = torch.from_numpy(pixel_values).double()
    state = {k: v.double() for k, v in load_state(folder).items()}
    dinov2 = config["model_type"] in ("dinov2", "dinov2_with_registers")
    registers = config["model_type"] == "dinov2_with_registers"
    prefix = "vit." if "vit.embeddings.cls_token" in state else ""
    grid, attentions, states, hidden = encoder(config, state, prefix, pixels, dinov2, registers,
                                       case.get("windows"))
    pooled = logits = None
    if dinov2:
        pooled = hidden[0]
    elif "pooler.dense.weight" in state:
        pooled = torch.tanh(linear(hidden[0], state, "pooler.dense"))
    if "classifier.weight" in state:
        logits = linear(hidden[0], state, "classifier")
    flat = lambda t: None if t is None else t.flatten().tolist()  # noqa: E731
    return {"grid": list(grid), "pixel_values": pixel_values.flatten().tolist(),
            "attention": flat(attentions), "last_hidden_state": flat(hidden),
            "hidden_states": flat(states),
            "pooled": flat(pooled), "logits": flat(logits)}


def main():
    request = json.load(sys.stdin)
    json.dump({"cases": [run_case(case) for case in request["cases"]]}, sys.stdout)


if __name__ == "__main__":
    main()
