#!/usr/bin/env python3
"""Tiny vision transformers in the exact Hugging Face layout, for the vision forward-pass tests.

Each folder holds config.json and preprocessor_config.json as the Hub's repositories have them
(the keys, the processor class, integer or dict sizes), and seeded random float32 weights in
model.safetensors under the key names real checkpoints use:

  vit             ViTForImageClassification, google/vit-base-patch16-224's layout: "vit." prefix,
                  vit.embeddings.{cls_token, position_embeddings, patch_embeddings.projection},
                  vit.encoder.layer.N.{layernorm_before, attention.attention.{query,key,value},
                  attention.output.dense, layernorm_after, intermediate.dense, output.dense},
                  vit.layernorm, classifier; id2label / label2id; a ViTFeatureExtractor config
                  (integer size, bilinear, mean and std 0.5) as that repository has it
  dino-vit        ViTModel, facebook/dino-vits16's layout: no prefix, the pooler (dense + tanh
                  on the class token) present, ImageNet mean and std
  dinov2          Dinov2Model, facebook/dinov2-small's layout: "embeddings.mask_token" present,
                  encoder.layer.N.{norm1, attention..., layer_scale1.lambda1, norm2, mlp.fc1,
                  mlp.fc2, layer_scale2.lambda1}, layernorm; trained on a 6 x 6 grid of patches
                  and preprocessed (BitImageProcessor: shortest edge, bicubic, centre crop) to a
                  4 x 4 one, so the position embeddings are interpolated as for the real model
                  (518 px trained, 224 px run)
  dinov2-wide     the same weights with a 28 x 42 crop: a 4 x 6 grid, interpolated unevenly
  dinov2-registers Dinov2WithRegistersModel (facebook/dinov2-with-registers-small's layout):
                  embeddings.register_tokens [1, 3, hidden] after the class token, and its
                  positions resized with antialiasing from a 6 x 6 grid to 4 x 5

Sizes are tiny (hidden 24-32, 2-3 layers, 7-8 pixel patches). Weights are scaled so attention
is far from uniform and layer scale is far from 1.

  /usr/bin/python3 tests/models/make_tiny_vit.py OUT_DIR
"""

import collections
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tiny_models import Weights, write_safetensors  # noqa: E402

IMAGENET_DEFAULT_MEAN = [0.485, 0.456, 0.406]
IMAGENET_DEFAULT_STD = [0.229, 0.224, 0.225]
LABELS = ["tench, Tinca tinca", "goldfish, Carassius auratus", "great white shark",
          "tiger shark, Galeocerdo cuvieri", "hammerhead, hammerhead shark"]

VIT_SIZES = dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                 intermediate_size=48, image_size=32, patch_size=8)
DINO_SIZES = dict(hidden_size=24, num_attention_heads=3, num_hidden_layers=3,
                  intermediate_size=40, image_size=32, patch_size=8)
DINOV2_SIZES = dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2, image_size=42,
                    patch_size=7)


def vit_config(sizes, architecture, labels=None):
    config = {
        "architectures": [architecture],
        "attention_probs_dropout_prob": 0.0,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        **sizes,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "model_type": "vit",
        "num_channels": 3,
        "qkv_bias": True,
        "transformers_version": "4.13.0.dev0",
    }
    if labels:
        config["id2label"] = {str(i): label for i, label in enumerate(labels)}
        config["label2id"] = {label: i for i, label in enumerate(labels)}
    return dict(sorted(config.items()))


def dinov2_config(registers=0):
    extra = {"model_type": "dinov2_with_registers", "num_register_tokens": registers,
             "architectures": ["Dinov2WithRegistersModel"]} if registers else {}
    return dict(sorted({
        "architectures": ["Dinov2Model"],
        "attention_probs_dropout_prob": 0.0,
        "drop_path_rate": 0.0,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.0,
        **DINOV2_SIZES,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-06,
        "layerscale_value": 1.0,
        "mlp_ratio": 4,
        "model_type": "dinov2",
        "num_channels": 3,
        "qkv_bias": True,
        "torch_dtype": "float32",
        "transformers_version": "4.31.0.dev0",
        "use_swiglu_ffn": False,
        **extra,
    }.items()))


def vit_preprocessor(size, mean, std):
    return {"do_normalize": True, "do_resize": True, "feature_extractor_type": "ViTFeatureExtractor",
            "image_mean": mean, "image_std": std, "resample": 2, "size": size}


def dinov2_preprocessor(shortest_edge, crop):
    return {"crop_size": crop, "do_center_crop": True, "do_convert_rgb": True,
            "do_normalize": True, "do_rescale": True, "do_resize": True,
            "image_mean": IMAGENET_DEFAULT_MEAN, "image_processor_type": "BitImageProcessor",
            "image_std": IMAGENET_DEFAULT_STD, "resample": 3,
            "rescale_factor": 0.00392156862745098, "size": {"shortest_edge": shortest_edge}}


def encoder_state(w, state, prefix, config, dinov2):
    """The shared parts: embeddings and every layer, under ViT's or DINOv2's names."""
    h, p = config["hidden_size"], config["patch_size"]
    grid = config["image_size"] // p
    state[f"{prefix}embeddings.cls_token"] = w.normal(1, 1, h, std=1.0)
    if dinov2:
        state[f"{prefix}embeddings.mask_token"] = torch.zeros(1, h)
    state[f"{prefix}embeddings.position_embeddings"] = w.normal(1, grid * grid + 1, h, std=0.5)
    projection = f"{prefix}embeddings.patch_embeddings.projection"
    state[f"{projection}.weight"] = w.normal(h, 3, p, p, std=2.0 / (3 * p * p) ** 0.5)
    state[f"{projection}.bias"] = w.vector(h)
    inner = int(h * config["mlp_ratio"]) if dinov2 else config["intermediate_size"]
    for n in range(config["num_hidden_layers"]):
        layer = f"{prefix}encoder.layer.{n}."
        norms = ("norm1", "norm2") if dinov2 else ("layernorm_before", "layernorm_after")
        for norm in norms:
            state[layer + norm + ".weight"] = w.gain(h)
            state[layer + norm + ".bias"] = w.vector(h)
        for name in ("query", "key", "value"):
            scale = 1.3 if name != "value" else 1.0
            state[f"{layer}attention.attention.{name}.weight"] = w.matrix(h, h, h) * scale
            state[f"{layer}attention.attention.{name}.bias"] = w.vector(h)
        state[f"{layer}attention.output.dense.weight"] = w.matrix(h, h, h)
        state[f"{layer}attention.output.dense.bias"] = w.vector(h)
        up, down = ("mlp.fc1", "mlp.fc2") if dinov2 else ("intermediate.dense", "output.dense")
        state[f"{layer}{up}.weight"] = w.matrix(inner, h, h)
        state[f"{layer}{up}.bias"] = w.vector(inner)
        state[f"{layer}{down}.weight"] = w.matrix(h, inner, inner)
        state[f"{layer}{down}.bias"] = w.vector(h)
        if dinov2:
            state[f"{layer}layer_scale1.lambda1"] = 0.5 + w.normal(h, std=0.3)
            state[f"{layer}layer_scale2.lambda1"] = 0.5 + w.normal(h, std=0.3)
    state[f"{prefix}layernorm.weight"] = w.gain(h)
    state[f"{prefix}layernorm.bias"] = w.vector(h)
    return state


def vit_classifier_state(config, seed):
    w = Weights(seed)
    state = encoder_state(w, collections.OrderedDict(), "vit.", config, dinov2=False)
    state["classifier.weight"] = w.matrix(len(LABELS), config["hidden_size"], config["hidden_size"])
    state["classifier.bias"] = w.vector(len(LABELS))
    return state


def dino_state(config, seed):
    w = Weights(seed)
    state = encoder_state(w, collections.OrderedDict(), "", config, dinov2=False)
    h = config["hidden_size"]
    state["pooler.dense.weight"] = w.matrix(h, h, h)
    state["pooler.dense.bias"] = w.vector(h)
    return state


def write_vision_model(out_dir, name, config, preprocessor, state):
    folder = os.path.join(out_dir, name)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    with open(os.path.join(folder, "preprocessor_config.json"), "w", encoding="utf-8") as f:
        json.dump(preprocessor, f, indent=2)
    write_safetensors(os.path.join(folder, "model.safetensors"), state)


def main(out_dir):
    vit = vit_config(VIT_SIZES, "ViTForImageClassification", LABELS)
    write_vision_model(out_dir, "vit", vit, vit_preprocessor(32, [0.5] * 3, [0.5] * 3),
                       vit_classifier_state(vit, seed=21))
    dino = vit_config(DINO_SIZES, "ViTModel")
    write_vision_model(out_dir, "dino-vit", dino,
                       vit_preprocessor(32, IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD),
                       dino_state(dino, seed=22))
    dinov2 = dinov2_config()
    state = encoder_state(Weights(23), collections.OrderedDict(), "", dinov2,
                          dinov2=True)
    write_vision_model(out_dir, "dinov2", dinov2,
                       dinov2_preprocessor(32, {"height": 28, "width": 28}), state)
    write_vision_model(out_dir, "dinov2-wide", dinov2,
                       dinov2_preprocessor(32, {"height": 28, "width": 42}), state)
    registers = dinov2_config(registers=3)
    w = Weights(24)
    state = encoder_state(w, collections.OrderedDict(), "", registers, dinov2=True)
    state["embeddings.register_tokens"] = w.normal(1, 3, registers["hidden_size"], std=1.0)
    write_vision_model(out_dir, "dinov2-registers", registers,
                       dinov2_preprocessor(32, {"height": 28, "width": 35}), state)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
