#!/usr/bin/python3
"""Builds the models bench/models/forward.mjs runs, with seeded random weights (no checkpoint can
be downloaded here):

  gpt2-small/        GPT-2 small's shape (12 layers, 12 heads, 768 wide, vocab 50257, 1024
                     positions) as a Hugging Face folder: config.json, the real GPT-2
                     tokenizer.json (tests/models/tokenizers.py) and model.safetensors
  gpt2-small.onnx    the same forward pass and the same weights as an ONNX graph of plain ops
                     (what a straight export gives): LayerNormalization, MatMul + Add, the causal
                     mask as an additive input, Softmax, gelu_new written out, the LM head as
                     Gemm(transB) on wte. Outputs every layer's attention probabilities
                     [12, 12, N, N] and the last position's logits, as attnlens returns them.
  tinystories-1m/    TinyStories-1M's shape (GPT-Neo: 8 layers, 16 heads, hidden 64, vocab
                     50257, window 256, 2048 positions)

    /usr/bin/python3 bench/models/build_models.py OUTPUT_DIR

Needs Debian's python3-torch (random weights) and python3-onnx (1.12: opset 17).
"""
import json
import math
import os
import sys

import torch
from onnx import TensorProto, helper, numpy_helper, save

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import make_tiny_models  # noqa: E402  (its hand-written safetensors writer and HF configs)
import tokenizers  # noqa: E402

LAYERS, HEADS, WIDTH, VOCAB, POSITIONS = 12, 12, 768, 50257, 1024


def gpt2_small_state():
    """GPT-2's own initialisation (N(0, 0.02), norms at 1), Conv1D layout, original key names."""
    g = torch.Generator().manual_seed(7)
    normal = lambda *shape: torch.randn(*shape, generator=g) * 0.02
    state = {"wte.weight": normal(VOCAB, WIDTH), "wpe.weight": normal(POSITIONS, WIDTH)}
    for layer in range(LAYERS):
        p = f"h.{layer}."
        state[p + "ln_1.weight"] = torch.ones(WIDTH)
        state[p + "ln_1.bias"] = torch.zeros(WIDTH)
        state[p + "attn.c_attn.weight"] = normal(WIDTH, 3 * WIDTH)
        state[p + "attn.c_attn.bias"] = normal(3 * WIDTH)
        state[p + "attn.c_proj.weight"] = normal(WIDTH, WIDTH)
        state[p + "attn.c_proj.bias"] = normal(WIDTH)
        state[p + "ln_2.weight"] = torch.ones(WIDTH)
        state[p + "ln_2.bias"] = torch.zeros(WIDTH)
        state[p + "mlp.c_fc.weight"] = normal(WIDTH, 4 * WIDTH)
        state[p + "mlp.c_fc.bias"] = normal(4 * WIDTH)
        state[p + "mlp.c_proj.weight"] = normal(4 * WIDTH, WIDTH)
        state[p + "mlp.c_proj.bias"] = normal(WIDTH)
    state["ln_f.weight"] = torch.ones(WIDTH)
    state["ln_f.bias"] = torch.zeros(WIDTH)
    return state


def gpt2_onnx(state):
    """GPT2LMHeadModel's forward as plain ONNX ops over `state`."""
    nodes, inits = [], [numpy_helper.from_array(t.numpy(), name) for name, t in state.items()]
    const = lambda name, values, dtype=TensorProto.FLOAT: inits.append(
        helper.make_tensor(name, dtype, [len(values)] if isinstance(values, list) else [], values))
    op = lambda kind, inputs, output, **attrs: nodes.append(
        helper.make_node(kind, inputs, [output], **attrs)) or output
    const("scale", [1.0 / math.sqrt(WIDTH // HEADS)])
    const("half", [0.5])
    const("one", [1.0])
    const("cubic", [0.044715])
    const("sqrt_2_pi", [math.sqrt(2.0 / math.pi)])
    const("three", [3.0])
    const("split3", [WIDTH, WIDTH, WIDTH], TensorProto.INT64)
    const("heads_shape", [0, HEADS, WIDTH // HEADS], TensorProto.INT64)
    const("merged_shape", [0, WIDTH], TensorProto.INT64)
    const("last", [-1], TensorProto.INT64)

    x = op("Add", [op("Gather", ["wte.weight", "ids"], "tok"),
                   op("Gather", ["wpe.weight", "positions"], "pos")], "x0")
    probs = []
    for layer in range(LAYERS):
        p = f"h.{layer}."
        ln = lambda src, name: op("LayerNormalization", [src, p + name + ".weight", p + name + ".bias"],
                                  p + name + ".out", axis=-1, epsilon=1e-5)
        linear = lambda src, name: op("Add", [op("MatMul", [src, p + name + ".weight"], p + name + ".mm"),
                                              p + name + ".bias"], p + name + ".y")
        qkv = linear(ln(x, "ln_1"), "attn.c_attn")
        nodes.append(helper.make_node("Split", [qkv, "split3"], [p + "q", p + "k", p + "v"], axis=1))
        heads = lambda t: op("Transpose", [op("Reshape", [t, "heads_shape"], t + ".r")], t + ".h",
                             perm=[1, 0, 2])  # [H, N, d]
        q, k, v = heads(p + "q"), heads(p + "k"), heads(p + "v")
        scores = op("MatMul", [q, op("Transpose", [k], p + "kt", perm=[0, 2, 1])], p + "scores")
        logits = op("Add", [op("Mul", [scores, "scale"], p + "scaled"), "causal_mask"], p + "logits")
        probs.append(op("Softmax", [logits], p + "probs", axis=-1))
        context = op("MatMul", [probs[-1], v], p + "context")
        merged = op("Reshape", [op("Transpose", [context], p + "ct", perm=[1, 0, 2]), "merged_shape"],
                    p + "merged")
        x = op("Add", [x, linear(merged, "attn.c_proj")], p + "x1")
        h = linear(ln(x, "ln_2"), "mlp.c_fc")
        # gelu_new: 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3)))
        inner = op("Mul", [op("Add", [h, op("Mul", [op("Pow", [h, "three"], p + "h3"), "cubic"], p + "c")],
                             p + "s"), "sqrt_2_pi"], p + "inner")
        gelu = op("Mul", [op("Mul", [h, "half"], p + "hh"), op("Add", [op("Tanh", [inner], p + "t"), "one"],
                                                                    p + "t1")], p + "gelu")
        x = op("Add", [x, linear(gelu, "mlp.c_proj")], p + "x2")
    x = op("LayerNormalization", [x, "ln_f.weight", "ln_f.bias"], "xf", axis=-1, epsilon=1e-5)
    last = op("Gather", [x, "last"], "x_last", axis=0)  # [1, WIDTH]
    op("Gemm", [last, "wte.weight"], "logits", transB=1)  # the LM head is tied to wte
    op("Concat", [op("Unsqueeze", [p_, "zero_axis"], p_ + ".u") for p_ in probs], "attention", axis=0)
    const("zero_axis", [0], TensorProto.INT64)

    n = "N"
    graph = helper.make_graph(
        nodes, "gpt2-small",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [n]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, [n]),
         helper.make_tensor_value_info("causal_mask", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("attention", TensorProto.FLOAT, [LAYERS, HEADS, n, n]),
         helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, VOCAB])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="attnlens bench/models")
    model.ir_version = 8
    return model


def tinystories_state(config):
    g = torch.Generator().manual_seed(8)
    normal = lambda *shape: torch.randn(*shape, generator=g) * 0.02
    h, inner = config["hidden_size"], 4 * config["hidden_size"]
    state = {"transformer.wte.weight": normal(VOCAB, h),
             "transformer.wpe.weight": normal(config["max_position_embeddings"], h)}
    for layer in range(config["num_layers"]):
        p = f"transformer.h.{layer}."
        state[p + "ln_1.weight"], state[p + "ln_1.bias"] = torch.ones(h), torch.zeros(h)
        for name in ("k_proj", "v_proj", "q_proj", "out_proj"):
            state[p + f"attn.attention.{name}.weight"] = normal(h, h)
        state[p + "attn.attention.out_proj.bias"] = normal(h)
        state[p + "ln_2.weight"], state[p + "ln_2.bias"] = torch.ones(h), torch.zeros(h)
        state[p + "mlp.c_fc.weight"], state[p + "mlp.c_fc.bias"] = normal(inner, h), normal(inner)
        state[p + "mlp.c_proj.weight"], state[p + "mlp.c_proj.bias"] = normal(h, inner), normal(h)
    state["transformer.ln_f.weight"] = torch.ones(h)
    state["transformer.ln_f.bias"] = torch.zeros(h)
    return state


def write_folder(folder, config, state, tokenizer):
    os.makedirs(folder, exist_ok=True)
    tokenizers.write_tokenizer(folder, tokenizer)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2)
    make_tiny_models.write_safetensors(os.path.join(folder, "model.safetensors"), state)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    tokenizer = tokenizers.gpt2_full_tokenizer()
    eos = tokenizer[0]["model"]["vocab"]["<|endoftext|>"]

    gpt2 = make_tiny_models.gpt2_config(VOCAB, eos)
    gpt2.update(n_embd=WIDTH, n_head=HEADS, n_layer=LAYERS, n_positions=POSITIONS, n_ctx=POSITIONS)
    state = gpt2_small_state()
    write_folder(os.path.join(out, "gpt2-small"), gpt2, state, tokenizer)
    save(gpt2_onnx(state), os.path.join(out, "gpt2-small.onnx"))

    neo = make_tiny_models.neo_config(VOCAB, eos)
    neo.update(hidden_size=64, num_heads=16, num_layers=8, max_position_embeddings=2048,
               window_size=256, attention_types=[[["global", "local"], 4]],
               attention_layers=["global", "local"] * 4)
    write_folder(os.path.join(out, "tinystories-1m"), neo, tinystories_state(neo), tokenizer)
    print(f"wrote gpt2-small/, gpt2-small.onnx and tinystories-1m/ to {out}")


if __name__ == "__main__":
    main()
