#!/usr/bin/python3
"""Builds the vision transformers bench/models/vision.mjs runs, with seeded random weights (no
checkpoint can be downloaded here), each as a Hugging Face folder and as an ONNX graph of the same
weights:

  vit-base/         google/vit-base-patch16-224's shape and files: ViTForImageClassification,
                    12 layers, 12 heads, 768 wide, MLP 3072, 16-pixel patches at 224 x 224 (196
                    patches + the class token), 1000 labels; a ViTFeatureExtractor config
                    (resize to 224 x 224, bilinear, mean and std 0.5) as that repository has it
  deit-tiny/        facebook/deit-tiny-patch16-224's: the same layout, 12 layers, 3 heads, 192
                    wide, MLP 768; a DeiTFeatureExtractor config (resize to 256, bicubic, centre
                    crop 224, ImageNet mean and std)
  vit-base.onnx     the same forward pass over the same weights as plain ONNX ops (what a
  deit-tiny.onnx    straight export gives): the patch embedding as a Conv (kernel = stride = 16),
                    the class token and positions as Concat and Add, LayerNormalization,
                    MatMul + Add for query, key and value, Softmax, GELU (erf) written out, the
                    classifier as Gemm over the class token. Input pixel_values [3, 224, 224];
                    outputs every layer's attention probabilities [12, heads, 197, 197] and the
                    logits [1, 1000], as attnlens' run(image) returns them.

The weights come from tests/models/make_tiny_vit.py's encoder_state (the key names real
checkpoints use, scaled so attention is far from uniform); labels are "class 0" to "class 999".

    /usr/bin/python3 bench/models/build_vision_models.py OUTPUT_DIR

Needs Debian's python3-torch and python3-onnx (1.12: opset 17).
"""
import collections
import math
import os
import sys

from onnx import TensorProto, helper, numpy_helper, save

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import make_tiny_vit  # noqa: E402  (the Hub layout: configs, key names, the weights' scales)
from make_tiny_models import Weights  # noqa: E402

LABELS = [f"class {i}" for i in range(1000)]
IMAGE, PATCH = 224, 16
MODELS = {
    "vit-base": dict(sizes=dict(hidden_size=768, num_attention_heads=12, num_hidden_layers=12,
                                intermediate_size=3072, image_size=IMAGE, patch_size=PATCH),
                     preprocessor=make_tiny_vit.vit_preprocessor(IMAGE, [0.5] * 3, [0.5] * 3),
                     seed=31),
    "deit-tiny": dict(sizes=dict(hidden_size=192, num_attention_heads=3, num_hidden_layers=12,
                                 intermediate_size=768, image_size=IMAGE, patch_size=PATCH),
                      preprocessor={
                          "crop_size": IMAGE, "do_center_crop": True, "do_normalize": True,
                          "do_resize": True, "feature_extractor_type": "DeiTFeatureExtractor",
                          "image_mean": make_tiny_vit.IMAGENET_DEFAULT_MEAN,
                          "image_std": make_tiny_vit.IMAGENET_DEFAULT_STD, "resample": 3,
                          "size": 256},
                      seed=32),
}


def classifier_state(config, seed):
    w = Weights(seed)
    state = make_tiny_vit.encoder_state(w, collections.OrderedDict(), "vit.", config,
                                        dinov2=False)
    h = config["hidden_size"]
    state["classifier.weight"] = w.matrix(len(LABELS), h, h)
    state["classifier.bias"] = w.vector(len(LABELS))
    return state


def vit_onnx(name, config, state):
    """ViTForImageClassification's forward as plain ONNX ops over `state`."""
    h, heads = config["hidden_size"], config["num_attention_heads"]
    layers, eps, d = config["num_hidden_layers"], config["layer_norm_eps"], h // heads
    patches = (IMAGE // PATCH) ** 2
    nodes, inits = [], []
    add_init = lambda key, array: inits.append(numpy_helper.from_array(array, key)) or key
    const = lambda key, values, dtype=TensorProto.FLOAT: inits.append(
        helper.make_tensor(key, dtype, [len(values)], values)) or key
    op = lambda kind, inputs, output, **attrs: nodes.append(
        helper.make_node(kind, inputs, [output], **attrs)) or output
    weight = lambda key: add_init(key, state[key].numpy())
    # nn.Linear keeps [out, in]; an export multiplies by its transpose, stored as a constant.
    linear = lambda src, key, out: op("Add", [op("MatMul", [src, add_init(
        key + ".weight.T", state[key + ".weight"].T.contiguous().numpy())], out + ".mm"),
        weight(key + ".bias")], out)
    layer_norm = lambda src, key, out: op("LayerNormalization", [
        src, weight(key + ".weight"), weight(key + ".bias")], out, axis=-1, epsilon=eps)

    const("zero_axis", [0], TensorProto.INT64)
    const("tokens_shape", [h, patches], TensorProto.INT64)
    const("heads_shape", [0, heads, d], TensorProto.INT64)
    const("merged_shape", [0, h], TensorProto.INT64)
    const("class_index", [0], TensorProto.INT64)
    const("sqrt_d", [math.sqrt(d)])
    const("sqrt_2", [math.sqrt(2.0)])
    const("one", [1.0])
    const("half", [0.5])

    e = "vit.embeddings."
    image = op("Unsqueeze", ["pixel_values", "zero_axis"], "image")  # [1, 3, 224, 224]
    conv = op("Conv", [image, weight(e + "patch_embeddings.projection.weight"),
                       weight(e + "patch_embeddings.projection.bias")], "patch_conv",
              kernel_shape=[PATCH, PATCH], strides=[PATCH, PATCH])  # [1, h, 14, 14]
    tokens = op("Transpose", [op("Reshape", [conv, "tokens_shape"], "patch_rows")], "patches",
                perm=[1, 0])  # [196, h], row by row
    add_init("class_token", state[e + "cls_token"][0].numpy())  # [1, h]
    x = op("Concat", ["class_token", tokens], "tokens", axis=0)
    add_init("positions", state[e + "position_embeddings"][0].numpy())  # [197, h]
    x = op("Add", [x, "positions"], "x0")
    probs = []
    for layer in range(layers):
        p = f"vit.encoder.layer.{layer}."
        a = p + "attention.attention."
        normed = layer_norm(x, p + "layernorm_before", p + "ln1")
        split = lambda kind: op("Transpose", [op("Reshape", [
            linear(normed, a + kind, p + kind), "heads_shape"], p + kind + ".r")],
            p + kind + ".h", perm=[1, 0, 2])  # [heads, N, d]
        q, k, v = split("query"), split("key"), split("value")
        scores = op("MatMul", [q, op("Transpose", [k], p + "kt", perm=[0, 2, 1])], p + "scores")
        probs.append(op("Softmax", [op("Div", [scores, "sqrt_d"], p + "scaled")], p + "probs",
                        axis=-1))
        context = op("MatMul", [probs[-1], v], p + "context")
        merged = op("Reshape", [op("Transpose", [context], p + "ct", perm=[1, 0, 2]),
                                "merged_shape"], p + "merged")
        x = op("Add", [x, linear(merged, p + "attention.output.dense", p + "attn_out")], p + "x1")
        up = linear(layer_norm(x, p + "layernorm_after", p + "ln2"), p + "intermediate.dense",
                    p + "up")
        # GELU (erf): 0.5 x (1 + erf(x / sqrt(2)))
        erf = op("Erf", [op("Div", [up, "sqrt_2"], p + "up_scaled")], p + "erf")
        gelu = op("Mul", [op("Mul", [up, op("Add", [erf, "one"], p + "erf1")], p + "g"), "half"],
                  p + "gelu")
        x = op("Add", [x, linear(gelu, p + "output.dense", p + "mlp_out")], p + "x2")
    x = layer_norm(x, "vit.layernorm", "final")
    cls = op("Gather", [x, "class_index"], "class_state", axis=0)  # [1, h]
    op("Gemm", [cls, weight("classifier.weight"), weight("classifier.bias")], "logits", transB=1)
    op("Concat", [op("Unsqueeze", [t, "zero_axis"], t + ".u") for t in probs], "attention", axis=0)

    n = patches + 1
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("pixel_values", TensorProto.FLOAT, [3, IMAGE, IMAGE])],
        [helper.make_tensor_value_info("attention", TensorProto.FLOAT, [layers, heads, n, n]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, len(LABELS)])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="attnlens bench/models")
    model.ir_version = 8
    return model


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name, spec in MODELS.items():
        config = make_tiny_vit.vit_config(spec["sizes"], "ViTForImageClassification", LABELS)
        state = classifier_state(config, spec["seed"])
        make_tiny_vit.write_vision_model(out, name, config, spec["preprocessor"], state)
        save(vit_onnx(name, config, state), os.path.join(out, f"{name}.onnx"))
    print(f"wrote {', '.join(f'{m}/ and {m}.onnx' for m in MODELS)} to {out}")


if __name__ == "__main__":
    main()
