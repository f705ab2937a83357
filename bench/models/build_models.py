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
  gpt2-small-decode.onnx
                     the same weights as the graph a decoder-with-past export gives (optimum's
                     `decoder_with_past`): inputs input_ids and position_ids [1, S],
                     attention_mask [1, past + S] and past_key_values.L.key / .value
                     [1, 12, past, 64]; outputs logits [1, 1, 50257] (the last position's) and
                     present.L.key / .value [1, 12, past + S, 64]. The causal mask is built in
                     the graph; past may be empty (the prompt's run). No attention comes out.
  gpt2-small-q8.onnx, gpt2-small-q8-decode.onnx
                     the two graphs above with every linear layer of a block as onnxruntime's
                     MatMulNBits (bits 8, blocks of 32): the Q8_0 weights attnlens' dtype 'q8'
                     makes of the same checkpoint, bit for bit, and wte / wpe rounded to f16 as
                     'q8' keeps embeddings (stored as f32 values)
  gpt2-small-q4.onnx, gpt2-small-q4-decode.onnx
                     the same with MatMulNBits bits 4: GGML's Q4_0 of the same checkpoint
                     (llama.cpp's quantize_row_q4_0_ref), f16 scales, default zero point 8
  gpt2-small-int8.onnx, gpt2-small-int8-decode.onnx
                     the two graphs with DynamicQuantizeLinear + MatMulInteger (what
                     onnxruntime's quantize_dynamic(per_channel=True) writes): int8 weights with
                     one scale per output column, activations quantised to uint8 per call
  qwen2.5-0.5b-shape/
                     Qwen2.5-0.5B's shape (24 layers, hidden 896, 14 heads, 2 key/value heads,
                     intermediate 4864, vocab 151936, tied) with random bfloat16 weights and the
                     builder's own small tokenizer (write_qwen2_05b), ~1 GB
  tinystories-1m/    TinyStories-1M's shape (GPT-Neo: 8 layers, 16 heads, hidden 64, vocab
                     50257, window 256, 2048 positions)
  marian-base/       Marian base's shape (opus-mt: 6 + 6 layers, d_model 512, 8 heads, ffn 2048,
                     vocab 65001, 512 positions) in the Hub's layout, random weights
                     (tests/models/make_tiny_marian.py's layout and tokenizer files)

    /usr/bin/python3 bench/models/build_models.py OUTPUT_DIR [NAME ...]

NAMEs (all by default) pick what to write. The ONNX graphs read their weights from
OUTPUT_DIR/gpt2-small/model.safetensors (written first when gpt2-small is among the NAMEs), so
they carry the weights attnlens loads. Needs Debian's python3-torch (random weights),
python3-onnx (1.12: opset 17) and python3-sentencepiece (Marian's tokenizer files).
"""
import json
import math
import os
import struct
import sys
import tempfile

import numpy
import torch
from onnx import TensorProto, helper, numpy_helper, save

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tests", "models"))
import make_gguf  # noqa: E402  (ggml's reference Q8_0 / Q4_0 quantisers)
import make_tiny_marian  # noqa: E402  (Marian's Hub layout, tokenizer files and weights)
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


# The Conv1D matrices ([in, out]) the int8 graphs quantise: every linear layer of a block.
QUANTISED = ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight")
Q8_BLOCK = 32


def to_f16_values(values):
    return values.astype(numpy.float16).astype(numpy.float32)


def ggml_blocks(matrix, quantise, block_bytes):
    """`matrix` [out, in] through make_gguf.py's port of ggml's reference quantiser (the bytes
    web/src/models/files/q8.js writes for Q8_0): (the blocks' bytes after the scale [out, in / 32,
    block_bytes - 2], the f16 scales widened to f32 [out, in / 32])."""
    rows, depth = matrix.shape
    raw = numpy.frombuffer(quantise(numpy.ascontiguousarray(matrix, numpy.float32)), numpy.uint8)
    blocks = raw.reshape(rows, depth // Q8_BLOCK, block_bytes)
    scales = blocks[:, :, :2].copy().view(numpy.float16)[:, :, 0].astype(numpy.float32)
    return blocks[:, :, 2:], scales


def quantised_initializers(name, conv1d, weights):
    """The initializers of one Conv1D matrix ([in, out]) in an int8 graph. q8: MatMulNBits' B
    [out, in / 32, 32] uint8 (Q8_0's q + 128, its default zero point) and scales [out * in / 32]
    (Q8_0's f16 scales): the same weights as attnlens' dtype 'q8'. int8: what onnxruntime's
    quantize_dynamic(per_channel=True) gives MatMulInteger: B int8 [in, out], one symmetric scale
    per output column (max |w| / 127), zero point 0."""
    if weights == "q8":  # int8 q as uint8 q + 128
        q, scale = ggml_blocks(conv1d.T, make_gguf.quantize_q8_0, 34)
        return [numpy_helper.from_array(q ^ numpy.uint8(0x80), name + ".q"),
                numpy_helper.from_array(scale.reshape(-1), name + ".scales")]
    if weights == "q4":  # GGML packs values j and j + 16 in byte j, MatMulNBits j and j + 1
        q, scale = ggml_blocks(conv1d.T, make_gguf.quantize_q4_0, 18)
        values = numpy.concatenate([q & 0xF, q >> 4], axis=2)
        packed = (values[:, :, 0::2] | (values[:, :, 1::2] << 4)).astype(numpy.uint8)
        return [numpy_helper.from_array(packed, name + ".q"),
                numpy_helper.from_array(scale.reshape(-1), name + ".scales")]
    scale = (numpy.abs(conv1d).max(axis=0) / numpy.float32(127)).astype(numpy.float32)
    q = numpy.clip(numpy.round(conv1d / numpy.where(scale == 0, 1, scale)), -127, 127).astype(numpy.int8)
    return [numpy_helper.from_array(q, name + ".q"), numpy_helper.from_array(scale, name + ".scales")]


class GraphBuilder:
    """Nodes and initializers of a GPT-2 graph over `state`, with the pieces both graphs share:
    constants, layer norm, a Conv1D linear, gelu_new and the MLP."""

    def __init__(self, state, weights="f32"):
        self.nodes = []
        self.weights = weights
        self.inits = []
        self.shapes = {}  # a quantised matrix's (out, in)
        for name, t in state.items():
            values = t.numpy()
            if weights != "f32" and name.endswith(QUANTISED):
                self.shapes[name[:-len(".weight")]] = values.shape[::-1]
                self.inits += quantised_initializers(name[:-len(".weight")], values, weights)
            elif weights in ("q8", "q4") and name in ("wte.weight", "wpe.weight"):
                # attnlens keeps embeddings as f16 under dtype 'q8': the same values here.
                self.inits.append(numpy_helper.from_array(to_f16_values(values), name))
            else:
                self.inits.append(numpy_helper.from_array(values, name))
        self.const("scale", [1.0 / math.sqrt(WIDTH // HEADS)])
        self.const("half", [0.5])
        self.const("one", [1.0])
        self.const("cubic", [0.044715])
        self.const("sqrt_2_pi", [math.sqrt(2.0 / math.pi)])
        self.const("three", [3.0])

    def const(self, name, values, dtype=TensorProto.FLOAT):
        """A list is a 1-D tensor; a single number a scalar."""
        dims, values = ([len(values)], values) if isinstance(values, list) else ([], [values])
        self.inits.append(helper.make_tensor(name, dtype, dims, values))

    def op(self, kind, inputs, output, **attrs):
        self.nodes.append(helper.make_node(kind, inputs, [output], **attrs))
        return output

    def ln(self, src, name):
        return self.op("LayerNormalization", [src, name + ".weight", name + ".bias"], name + ".out",
                       axis=-1, epsilon=1e-5)

    def linear(self, src, name):
        op = self.op
        if self.weights in ("q8", "q4"):  # GGML blocks of 32 along the depth, f32 scales
            rows, depth = self.shapes[name]
            product = op("MatMulNBits", [src, name + ".q", name + ".scales"], name + ".mm",
                         domain="com.microsoft", K=depth, N=rows, bits=int(self.weights[1]),
                         block_size=Q8_BLOCK)
        elif self.weights == "int8":  # activations quantised per call, weights per column
            self.nodes.append(helper.make_node("DynamicQuantizeLinear", [src],
                                               [name + ".xq", name + ".xs", name + ".xz"]))
            integers = op("MatMulInteger", [name + ".xq", name + ".q", name + ".xz"], name + ".mmi")
            floats = op("Cast", [integers], name + ".mmf", to=TensorProto.FLOAT)
            product = op("Mul", [op("Mul", [floats, name + ".xs"], name + ".mmx"), name + ".scales"],
                         name + ".mm")
        else:
            product = op("MatMul", [src, name + ".weight"], name + ".mm")
        return op("Add", [product, name + ".bias"], name + ".y")

    def mlp(self, x, p):
        """x + c_proj(gelu_new(c_fc(ln_2(x)))), gelu_new being 0.5 h (1 + tanh(sqrt(2/pi) (h +
        0.044715 h^3)))."""
        op = self.op
        h = self.linear(self.ln(x, p + "ln_2"), p + "mlp.c_fc")
        inner = op("Mul", [op("Add", [h, op("Mul", [op("Pow", [h, "three"], p + "h3"), "cubic"], p + "c")],
                             p + "s"), "sqrt_2_pi"], p + "inner")
        gelu = op("Mul", [op("Mul", [h, "half"], p + "hh"), op("Add", [op("Tanh", [inner], p + "t"), "one"],
                                                                    p + "t1")], p + "gelu")
        return op("Add", [x, self.linear(gelu, p + "mlp.c_proj")], p + "x2")


def opsets(weights):
    """Opset 17, and onnxruntime's contrib domain for MatMulNBits."""
    extra = [helper.make_opsetid("com.microsoft", 1)] if weights in ("q8", "q4") else []
    return [helper.make_opsetid("", 17)] + extra


def gpt2_onnx(state, weights="f32"):
    """GPT2LMHeadModel's forward as plain ONNX ops over `state`; `weights` 'q8' or 'int8': the
    linear layers as GraphBuilder.linear quantises them."""
    g = GraphBuilder(state, weights)
    nodes, const, op = g.nodes, g.const, g.op
    const("split3", [WIDTH, WIDTH, WIDTH], TensorProto.INT64)
    const("heads_shape", [0, HEADS, WIDTH // HEADS], TensorProto.INT64)
    const("merged_shape", [0, WIDTH], TensorProto.INT64)
    const("last", [-1], TensorProto.INT64)

    x = op("Add", [op("Gather", ["wte.weight", "ids"], "tok"),
                   op("Gather", ["wpe.weight", "positions"], "pos")], "x0")
    probs = []
    for layer in range(LAYERS):
        p = f"h.{layer}."
        qkv = g.linear(g.ln(x, p + "ln_1"), p + "attn.c_attn")
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
        x = g.mlp(op("Add", [x, g.linear(merged, p + "attn.c_proj")], p + "x1"), p)
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
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=opsets(weights),
                              producer_name="attnlens bench/models")
    model.ir_version = 8
    return model


def gpt2_decode_onnx(state, weights="f32"):
    """GPT2LMHeadModel's forward with past key/values over `state`, batch 1, as plain ONNX ops
    (the inputs and outputs of optimum's decoder_with_past export); `weights` as gpt2_onnx's."""
    g = GraphBuilder(state, weights)
    nodes, const, op = g.nodes, g.const, g.op
    head = WIDTH // HEADS
    const("zero_f", 0.0)
    const("blocked_f", -3.4028234663852886e38)
    const("split3", [WIDTH, WIDTH, WIDTH], TensorProto.INT64)
    const("heads_shape", [0, 0, HEADS, head], TensorProto.INT64)
    const("merged_shape", [0, 0, WIDTH], TensorProto.INT64)
    const("last", -1, TensorProto.INT64)  # a scalar index: Gather drops the axis
    const("zero_i", 0, TensorProto.INT64)
    const("one_i", 1, TensorProto.INT64)
    const("axis0", [0], TensorProto.INT64)
    const("axis1", [1], TensorProto.INT64)
    const("axis2", [2], TensorProto.INT64)

    x = op("Add", [op("Gather", ["wte.weight", "input_ids"], "tok"),
                   op("Gather", ["wpe.weight", "position_ids"], "pos")], "x0")  # [1, S, W]
    # Key j is hidden from query i when j > position_ids[i] (causal) or attention_mask[j] = 0.
    total = op("Gather", [op("Shape", ["attention_mask"], "mask_shape"), "one_i"], "total")
    key_positions = op("Range", ["zero_i", total, "one_i"], "key_positions")  # [T]
    later = op("Greater", [key_positions, op("Unsqueeze", ["position_ids", "axis2"], "qpos")],
               "later")  # [1, S, T]
    padded = op("Unsqueeze", [op("Equal", ["attention_mask", "zero_i"], "pad"), "axis1"],
                "padded")  # [1, 1, T]
    blocked = op("Or", [later, padded], "blocked")
    mask = op("Unsqueeze", [op("Where", [blocked, "blocked_f", "zero_f"], "mask3"), "axis1"],
              "mask")  # [1, 1, S, T]
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "S"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "T"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "S"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1, VOCAB])]
    for layer in range(LAYERS):
        p = f"h.{layer}."
        qkv = g.linear(g.ln(x, p + "ln_1"), p + "attn.c_attn")
        nodes.append(helper.make_node("Split", [qkv, "split3"], [p + "q", p + "k", p + "v"], axis=2))
        heads = lambda t: op("Transpose", [op("Reshape", [t, "heads_shape"], t + ".r")], t + ".h",
                             perm=[0, 2, 1, 3])  # [1, H, S, d]
        q = heads(p + "q")
        present = {}
        for kind in ("key", "value"):
            past, out = f"past_key_values.{layer}.{kind}", f"present.{layer}.{kind}"
            inputs.append(helper.make_tensor_value_info(past, TensorProto.FLOAT, [1, HEADS, "P", head]))
            outputs.append(helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, HEADS, "T", head]))
            present[kind] = op("Concat", [past, heads(p + kind[0])], out, axis=2)
        scores = op("MatMul", [q, op("Transpose", [present["key"]], p + "kt", perm=[0, 1, 3, 2])],
                    p + "scores")
        logits = op("Add", [op("Mul", [scores, "scale"], p + "scaled"), mask], p + "logits")
        probs = op("Softmax", [logits], p + "probs", axis=-1)
        context = op("MatMul", [probs, present["value"]], p + "context")
        merged = op("Reshape", [op("Transpose", [context], p + "ct", perm=[0, 2, 1, 3]), "merged_shape"],
                    p + "merged")
        x = g.mlp(op("Add", [x, g.linear(merged, p + "attn.c_proj")], p + "x1"), p)
    x = op("LayerNormalization", [x, "ln_f.weight", "ln_f.bias"], "xf", axis=-1, epsilon=1e-5)
    # The last position's logits only: all greedy decoding reads (the whole prompt's [S, 50257]
    # would cost onnxruntime a head product per prompt token that attnlens does not compute).
    last = op("Gather", [x, "last"], "x_last", axis=1)  # [1, W]
    head_out = op("Gemm", [last, "wte.weight"], "logits_rows", transB=1)  # tied to wte
    op("Unsqueeze", [head_out, "axis0"], "logits")  # [1, 1, V]
    graph = helper.make_graph(nodes, "gpt2-small-decode", inputs, outputs, initializer=g.inits)
    model = helper.make_model(graph, opset_imports=opsets(weights),
                              producer_name="attnlens bench/models")
    model.ir_version = 8
    return model


SAFETENSORS_NUMPY = {"F32": numpy.float32}


def read_safetensors(path):
    """A safetensors file's tensors (f32 only: what gpt2_small_state writes) as torch tensors."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
        data = f.read()
    state = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = numpy.frombuffer(data, SAFETENSORS_NUMPY[entry["dtype"]], (end - begin) // 4, begin)
        state[name] = torch.from_numpy(array.reshape(entry["shape"]).copy())
    return state


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


# Marian base as opus-mt has it (Helsinki-NLP/opus-mt-zh-en's config: vocab 65001, 4 beams).
MARIAN_SIZES = {"d_model": 512, "encoder_layers": 6, "decoder_layers": 6,
                "encoder_attention_heads": 8, "decoder_attention_heads": 8,
                "encoder_ffn_dim": 2048, "decoder_ffn_dim": 2048, "max_position_embeddings": 512}
MARIAN_VOCAB, MARIAN_BEAMS = 65001, 4
# translate.mjs's 20-word sentence (the two spell it alike): its token count is printed.
MARIAN_SENTENCE = ("The little girl walked to the park with her cat, and they sat on the grass "
                   "to watch the birds.")


def english_corpus():
    """A text of English words for the tokenizer: the GPT-2 vocabulary's words (a space and
    letters), all of them 20 to a line, then each again about 3000 / rank times, the vocabulary's
    order (its merges') standing in for frequency."""
    with open(os.path.join(tokenizers.GPT3_ENCODER, "encoder.json"), encoding="utf-8") as f:
        ids = json.load(f)
    words = [t[1:] for t, _ in sorted(ids.items(), key=lambda item: item[1])
             if t[0] == "\u0120" and t[1:].isascii() and t[1:].isalpha()]
    lines = [" ".join(words[i:i + 20]) for i in range(0, len(words), 20)]
    lines += [" ".join([w] * (3000 // rank)) for rank, w in enumerate(words, 1) if 3000 // rank > 1]
    return "\n".join(lines) + "\n"


def write_marian_base(folder):
    """One SentencePiece Unigram model of 8000 pieces trained on english_corpus() serves as
    source.spm and target.spm (opus-mt's have 32k pieces each: common English words are whole
    pieces in both); vocab.json maps its pieces and is filled up to opus-mt's 65,001 ids with
    pieces the spm never produces, '<pad>' last, so the embeddings, the LM head and
    final_logits_bias have opus-mt's size."""
    with tempfile.TemporaryDirectory() as tmp:
        spm_bytes, spm = make_tiny_marian.train_spm(english_corpus(), os.path.join(tmp, "spm"), 8000,
                                                    seed_size=200000)
    vocab = make_tiny_marian.make_vocab(spm, spm)
    del vocab["<pad>"]
    for i in range(MARIAN_VOCAB - 1 - len(vocab)):
        vocab[f"\u2581filler{i}"] = len(vocab)
    vocab["<pad>"] = len(vocab)
    cfg = make_tiny_marian.config(vocab, MARIAN_SIZES, MARIAN_BEAMS, "opus-mt-base-shape")
    state = make_tiny_marian.state_dict(cfg)
    make_tiny_marian.write_hub_folder(folder, "safetensors", cfg, state, vocab, spm_bytes, spm_bytes)
    print(f"marian-base: {spm.get_piece_size()} spm pieces, vocab.json {len(vocab)} ids; the "
          f"20-word sentence is {len(spm.encode(MARIAN_SENTENCE)) + 1} source tokens with </s>")


# Qwen/Qwen2.5-0.5B's config.json fields (the transformers Qwen2Config it was saved from); the
# tokenizer is the builder's own (make_qwen2_05b), so bos/eos are its id.
QWEN2_05B = {"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
             "num_attention_heads": 14, "num_key_value_heads": 2, "max_position_embeddings": 32768,
             "max_window_layers": 24, "sliding_window": 32768, "use_sliding_window": False,
             "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "tie_word_embeddings": True,
             "vocab_size": 151936}


def write_qwen2_05b(folder):
    """Qwen2.5-0.5B's shape with seeded random weights (make_tiny_models.llama_state), bfloat16
    as the Hub's model.safetensors is. No real Qwen tokenizer can be had here: the tokenizer is
    tests/models/tokenizers.py's byte-level BPE in Qwen2.5's tokenizer.json layout, 2,000 merges
    (its ids fill the first few thousand rows of the 151,936-row embedding)."""
    tokenizer = tokenizers.qwen2_tokenizer(merges=2000)
    eos = tokenizer[0]["model"]["vocab"]["<|endoftext|>"]
    # Pieces the tokenizer never produces fill the vocabulary up to the embedding's rows, so every
    # id a random model predicts has a token (Qwen2.5's own tokenizer leaves its last 271 rows
    # without one).
    vocab = tokenizer[0]["model"]["vocab"]  # the special tokens among them
    for i in range(QWEN2_05B["vocab_size"] - len(vocab)):
        vocab[f"filler{i}"] = len(vocab)
    config = make_tiny_models.qwen2_config(QWEN2_05B["vocab_size"], eos)
    config.update(QWEN2_05B)
    state = make_tiny_models.to_bfloat16(make_tiny_models.llama_state(config, config["vocab_size"], 9))
    write_folder(folder, config, state, tokenizer)


NAMES = ["gpt2-small", "gpt2-small.onnx", "gpt2-small-decode.onnx", "tinystories-1m",
         "marian-base", "gpt2-small-q8.onnx", "gpt2-small-q8-decode.onnx", "gpt2-small-int8.onnx",
         "gpt2-small-int8-decode.onnx", "gpt2-small-q4.onnx", "gpt2-small-q4-decode.onnx",
         "qwen2.5-0.5b-shape"]
# The quantised graphs of gpt2-small, by file name.
INT8_GRAPHS = {"gpt2-small-q8.onnx": (lambda st: gpt2_onnx(st, "q8")),
               "gpt2-small-q8-decode.onnx": (lambda st: gpt2_decode_onnx(st, "q8")),
               "gpt2-small-int8.onnx": (lambda st: gpt2_onnx(st, "int8")),
               "gpt2-small-int8-decode.onnx": (lambda st: gpt2_decode_onnx(st, "int8")),
               "gpt2-small-q4.onnx": (lambda st: gpt2_onnx(st, "q4")),
               "gpt2-small-q4-decode.onnx": (lambda st: gpt2_decode_onnx(st, "q4"))}


def main():
    if len(sys.argv) < 2 or any(name not in NAMES for name in sys.argv[2:]):
        sys.exit(__doc__)
    out = sys.argv[1]
    names = sys.argv[2:] or NAMES
    tokenizer = tokenizers.gpt2_full_tokenizer()
    eos = tokenizer[0]["model"]["vocab"]["<|endoftext|>"]

    if "gpt2-small" in names:
        gpt2 = make_tiny_models.gpt2_config(VOCAB, eos)
        gpt2.update(n_embd=WIDTH, n_head=HEADS, n_layer=LAYERS, n_positions=POSITIONS, n_ctx=POSITIONS)
        write_folder(os.path.join(out, "gpt2-small"), gpt2, gpt2_small_state(), tokenizer)
    graphs = [n for n in names if n.endswith(".onnx")]
    if graphs:
        state = read_safetensors(os.path.join(out, "gpt2-small", "model.safetensors"))
        if "gpt2-small.onnx" in names:
            save(gpt2_onnx(state), os.path.join(out, "gpt2-small.onnx"))
        if "gpt2-small-decode.onnx" in names:
            save(gpt2_decode_onnx(state), os.path.join(out, "gpt2-small-decode.onnx"))
        for name in graphs:
            if name in INT8_GRAPHS:
                save(INT8_GRAPHS[name](state), os.path.join(out, name))
        del state
    if "qwen2.5-0.5b-shape" in names:
        write_qwen2_05b(os.path.join(out, "qwen2.5-0.5b-shape"))

    if "tinystories-1m" in names:
        neo = make_tiny_models.neo_config(VOCAB, eos)
        neo.update(hidden_size=64, num_heads=16, num_layers=8, max_position_embeddings=2048,
                   window_size=256, attention_types=[[["global", "local"], 4]],
                   attention_layers=["global", "local"] * 4)
        write_folder(os.path.join(out, "tinystories-1m"), neo, tinystories_state(neo), tokenizer)
    if "marian-base" in names:
        write_marian_base(os.path.join(out, "marian-base"))
    print(f"wrote {', '.join(names)} to {out}")


if __name__ == "__main__":
    main()
