#!/usr/bin/env python3
"""GGUF files for the tests, written from llama.cpp's docs/gguf.md (version 3) with our own
numpy quantisers, so the loader is checked against a writer that shares none of its code.

  make_gguf.py OUT_DIR [TINY_MODELS_DIR]

writes
  stories260K-{f32,q8_0,q4_0}.gguf  the bundled llama2.c stories260K (web/src/models/bundled/)
                                    with its tok512.bin tokenizer in the metadata ("llama"
                                    SentencePiece), q/k rows in the interleaved rotary layout
                                    GGUF keeps (llama2.c's own layout: no permutation needed);
                                    matrices whose rows are not whole 32-value blocks stay F32,
                                    as llama-quantize falls back for them; in the Q4_0 file the
                                    tied embedding (the output head) is Q8_0, as llama-quantize
                                    keeps a head.
  {smollm2,qwen2,gpt2}-{f32,f16,bf16,q8_0,q4_0}.gguf
                                    with a tiny-models folder (make_tiny_models.py's output) as
                                    the second argument: those fixtures as llama.cpp's
                                    convert_hf_to_gguf.py lays them out (llama's q/k rows
                                    permuted to the interleaved rotary layout, GPT-2's Conv1D
                                    weights transposed to [out, in], output.weight a copy of
                                    GPT-2's wte), their tokenizer.json as "gpt2" BPE metadata.
                                    K-quants need rows of 256 values, which these tiny models
                                    do not have (every matrix would stay F32).
  wide-{f32,q8_0,q4_k,q5_k,q6_k}.gguf
                                    a seeded random llama whose rows are 256 values (hidden 256,
                                    4 heads sharing 2 K/V heads, one layer) with stories260K's
                                    tokenizer: the K-quants in a whole model.
  types.gguf + types.f32            one tensor per type (F32, F16, BF16, Q8_0, Q4_0, Q4_K, Q5_K,
                                    Q6_K) of seeded values, and the float32 values this file's
                                    dequantisers give for each, concatenated in tensor order.

Quantisers: Q8_0 and Q4_0 are ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref. The K-quants
use a plain min/max fit per sub-block (ggml's make_qkx2_quants searches for a better one) with
ggml's block layouts and 6-bit scale packing: the dequantisation, which is what the loader does,
is ggml's dequantize_row_* exactly, in float32.
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from llama2c_reference import read_checkpoint, read_tokenizer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
BUNDLED = REPO / "web/src/models/bundled/stories260K"
ALIGNMENT = 32
TYPE_IDS = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 8, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14,
            "BF16": 30}
BLOCK = {"Q8_0": 32, "Q4_0": 32, "Q4_K": 256, "Q5_K": 256, "Q6_K": 256}
f32 = np.float32

# --- metadata values -------------------------------------------------------------------------
U32, I32, F32V, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9


def pack_string(text):
    data = text.encode("utf-8")
    return struct.pack("<Q", len(data)) + data


def pack_value(kind, value):
    if kind == STRING:
        return pack_string(value)
    if kind == ARRAY:
        element, values = value
        out = struct.pack("<IQ", element, len(values))
        return out + b"".join(pack_value(element, v) for v in values)
    return struct.pack({U32: "<I", I32: "<i", F32V: "<f", BOOL: "<?"}[kind], value)


def write_gguf(path, metadata, tensors):
    """metadata: [(key, kind, value)]; tensors: [(name, shape outermost first, type, bytes)]."""
    out = [b"GGUF", struct.pack("<IQQ", 3, len(tensors), len(metadata))]
    for key, kind, value in metadata:
        out += [pack_string(key), struct.pack("<I", kind), pack_value(kind, value)]
    offset = 0
    for name, shape, kind, data in tensors:
        out += [pack_string(name), struct.pack("<I", len(shape))]
        out += [struct.pack("<Q", size) for size in reversed(shape)]
        out += [struct.pack("<IQ", TYPE_IDS[kind], offset)]
        offset += -(-len(data) // ALIGNMENT) * ALIGNMENT
    head = b"".join(out)
    blob = [head, b"\0" * (-len(head) % ALIGNMENT)]
    for _, _, _, data in tensors:
        blob += [data, b"\0" * (-len(data) % ALIGNMENT)]
    Path(path).write_bytes(b"".join(blob))


# --- quantisers (numpy) and ggml's dequantisers ----------------------------------------------
def half(values):
    return np.asarray(values, dtype=np.float32).astype(np.float16)


def round_away(x):
    """C's roundf (half away from zero), which ggml's reference quantisers use."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_q8_0(x):
    blocks = x.reshape(-1, 32).astype(f32)
    d = (np.abs(blocks).max(axis=1) / f32(127)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d != 0, d, 1), 0).astype(f32)
    q = round_away((blocks * inv[:, None]).astype(f32)).astype(np.int8)
    out = np.zeros((len(blocks), 34), np.uint8)
    out[:, :2] = half(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def quantize_q4_0(x):
    blocks = x.reshape(-1, 32).astype(f32)
    at = np.abs(blocks).argmax(axis=1)
    peak = blocks[np.arange(len(blocks)), at]
    d = (peak / f32(-8)).astype(f32)
    inv = np.where(d != 0, f32(1) / np.where(d != 0, d, 1), 0).astype(f32)
    # ggml: MIN(15, (int8_t)(x * id + 8.5f)): a truncation toward zero.
    q = np.minimum(15, np.trunc((blocks * inv[:, None] + f32(8.5)).astype(f32))).astype(np.uint8)
    out = np.zeros((len(blocks), 18), np.uint8)
    out[:, :2] = half(d).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :16] | (q[:, 16:] << 4)
    return out.tobytes()


def pack_scales_k4(ls, lm):
    """ggml's 12-byte packing of eight 6-bit scales and mins (get_scale_min_k4's inverse)."""
    s = np.zeros(12, np.uint8)
    for j in range(8):
        if j < 4:
            s[j] = ls[j]
            s[j + 4] = lm[j]
        else:
            s[j + 4] = (ls[j] & 0xF) | ((lm[j] & 0xF) << 4)
            s[j - 4] |= (ls[j] >> 4) << 6
            s[j] |= (lm[j] >> 4) << 6
    return s


def quantize_k45(x, bits):
    levels = (1 << bits) - 1
    out = []
    for block in x.reshape(-1, 256).astype(f32):
        sub = block.reshape(8, 32)
        mins = np.minimum(sub.min(axis=1), 0)
        scales = (sub.max(axis=1) - mins) / levels
        d = half(scales.max() / 63)
        dmin = half(-mins.min() / 63)
        df, dminf = f32(d), f32(dmin)
        ls = np.clip(round_away(scales / df if df else 0 * scales), 0, 63).astype(np.uint8)
        lm = np.clip(round_away(-mins / dminf if dminf else 0 * mins), 0, 63).astype(np.uint8)
        q = np.zeros((8, 32), np.uint8)
        for j in range(8):
            step = f32(df * f32(ls[j]))
            if step:
                q[j] = np.clip(round_away((sub[j] + f32(dminf * f32(lm[j]))) / step), 0, levels)
        data = d.tobytes() + dmin.tobytes() + pack_scales_k4(ls, lm).tobytes()
        if bits == 5:
            qh = np.zeros(32, np.uint8)
            for j in range(8):
                qh |= ((q[j] >> 4) & 1) << j
            data += qh.tobytes()
        low = q & 0xF
        qs = np.concatenate([low[j] | (low[j + 1] << 4) for j in range(0, 8, 2)])
        out.append(data + qs.astype(np.uint8).tobytes())
    return b"".join(out)


def quantize_q6_k(x):
    out = []
    for block in x.reshape(-1, 256).astype(f32):
        sub = block.reshape(16, 16)
        peak = sub[np.arange(16), np.abs(sub).argmax(axis=1)]
        scales = peak / f32(-32)
        d = half(np.abs(scales).max() / 127)
        df = f32(d)
        sc = np.clip(round_away(scales / df if df else 0 * scales), -128, 127).astype(np.int8)
        q = np.zeros((16, 16), np.int64)
        for j in range(16):
            step = f32(df * f32(sc[j]))
            if step:
                q[j] = np.clip(round_away(sub[j] / step), -32, 31)
        q = (q + 32).reshape(256).astype(np.uint8)
        ql = np.zeros(128, np.uint8)
        qh = np.zeros(64, np.uint8)
        for n in range(2):
            y, l_ = q[n * 128:(n + 1) * 128], np.arange(32)
            q1, q2, q3, q4 = y[l_], y[l_ + 32], y[l_ + 64], y[l_ + 96]
            ql[n * 64 + l_] = (q1 & 0xF) | ((q3 & 0xF) << 4)
            ql[n * 64 + 32 + l_] = (q2 & 0xF) | ((q4 & 0xF) << 4)
            qh[n * 32 + l_] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6)
        out.append(ql.tobytes() + qh.tobytes() + sc.tobytes() + d.tobytes())
    return b"".join(out)


def get_scale_min_k4(j, s):
    if j < 4:
        return int(s[j] & 63), int(s[j + 4] & 63)
    return (int((s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4)),
            int((s[j + 4] >> 4) | ((s[j] >> 6) << 4)))


def dequantize(data, kind, count):
    """ggml's dequantize_row_* in float32, from the block bytes."""
    raw = np.frombuffer(data, np.uint8)
    fp16 = lambda at: f32(raw[at:at + 2].view(np.float16)[0])
    y = np.zeros(count, f32)
    if kind == "Q8_0":
        for b in range(count // 32):
            d = fp16(b * 34)
            y[b * 32:(b + 1) * 32] = raw[b * 34 + 2:b * 34 + 34].view(np.int8).astype(f32) * d
    elif kind == "Q4_0":
        for b in range(count // 32):
            d, qs = fp16(b * 18), raw[b * 18 + 2:b * 18 + 18].astype(np.int32)
            y[b * 32:b * 32 + 16] = ((qs & 0xF) - 8).astype(f32) * d
            y[b * 32 + 16:b * 32 + 32] = ((qs >> 4) - 8).astype(f32) * d
    elif kind in ("Q4_K", "Q5_K"):
        size = 144 if kind == "Q4_K" else 176
        for b in range(count // 256):
            at = b * size
            d, dmin, s = fp16(at), fp16(at + 2), raw[at + 4:at + 16]
            qh = raw[at + 16:at + 48]
            qs = raw[at + (48 if kind == "Q5_K" else 16):at + size]
            for j in range(4):
                q = qs[32 * j:32 * j + 32].astype(np.int32)
                for half_, values in ((0, q & 0xF), (1, q >> 4)):
                    sub = 2 * j + half_
                    sc, m = get_scale_min_k4(sub, s)
                    if kind == "Q5_K":
                        values = values + np.where(qh & (1 << sub), 16, 0)
                    d1, m1 = f32(d * f32(sc)), f32(dmin * f32(m))
                    y[b * 256 + 32 * sub:b * 256 + 32 * sub + 32] = (
                        (d1 * values.astype(f32)).astype(f32) - m1)
    elif kind == "Q6_K":
        for b in range(count // 256):
            at = b * 210
            ql, qh = raw[at:at + 128].astype(np.int32), raw[at + 128:at + 192].astype(np.int32)
            sc, d = raw[at + 192:at + 208].view(np.int8), fp16(at + 208)
            for n in range(2):
                l_ = np.arange(32)
                lo, hi, h = ql[n * 64 + l_], ql[n * 64 + 32 + l_], qh[n * 32 + l_]
                qs = [(lo & 0xF) | ((h & 3) << 4), (hi & 0xF) | (((h >> 2) & 3) << 4),
                      (lo >> 4) | (((h >> 4) & 3) << 4), (hi >> 4) | (((h >> 6) & 3) << 4)]
                for k, q in enumerate(qs):
                    scale = sc[n * 8 + l_ // 16 + 2 * k].astype(f32)
                    y[b * 256 + n * 128 + 32 * k + l_] = (
                        (d * scale).astype(f32) * (q - 32).astype(f32)).astype(f32)
    return y


def encode_tensor(values, kind):
    values = np.ascontiguousarray(values, dtype=f32)
    if kind == "F32":
        return values.tobytes()
    if kind == "F16":
        return values.astype(np.float16).tobytes()
    if kind == "BF16":
        bits = values.view(np.uint32)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest even
        return rounded.astype(np.uint16).tobytes()
    return {"Q8_0": quantize_q8_0, "Q4_0": quantize_q4_0, "Q6_K": quantize_q6_k,
            "Q4_K": lambda x: quantize_k45(x, 4), "Q5_K": lambda x: quantize_k45(x, 5)}[kind](
                values.reshape(-1))


def tensor_type(shape, kind):
    """The type a matrix gets (1-D tensors and rows of partial blocks stay F32)."""
    if kind in BLOCK and (len(shape) < 2 or shape[-1] % BLOCK[kind] != 0):
        return "F32"
    return kind


# --- stories260K -----------------------------------------------------------------------------
def stories_metadata(p, name="stories260K"):
    pieces, scores = read_tokenizer(BUNDLED / "tok512.bin", p["vocab"])
    tokens, types = [], []
    for i, piece in enumerate(pieces):
        text = piece.decode("utf-8")
        if i < 3:
            tokens.append(["<unk>", "<s>", "</s>"][i])
            types.append([2, 3, 3][i])
        else:
            tokens.append(text.replace(" ", "\u2581"))
            types.append(6 if 3 <= i < 259 else 1)
    arch = "llama"
    return [
        ("general.architecture", STRING, arch),
        ("general.name", STRING, name),
        ("general.alignment", U32, ALIGNMENT),
        (f"{arch}.context_length", U32, p["seq_len"]),
        (f"{arch}.embedding_length", U32, p["dim"]),
        (f"{arch}.block_count", U32, p["layers"]),
        (f"{arch}.feed_forward_length", U32, p["hidden"]),
        (f"{arch}.attention.head_count", U32, p["heads"]),
        (f"{arch}.attention.head_count_kv", U32, p["kv_heads"]),
        (f"{arch}.rope.dimension_count", U32, p["head_size"]),
        (f"{arch}.rope.freq_base", F32V, 10000.0),
        (f"{arch}.attention.layer_norm_rms_epsilon", F32V, 1e-5),
        ("tokenizer.ggml.model", STRING, "llama"),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.scores", ARRAY, (F32V, scores)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, types)),
        ("tokenizer.ggml.bos_token_id", U32, 1),
        ("tokenizer.ggml.eos_token_id", U32, 2),
        ("tokenizer.ggml.unknown_token_id", U32, 0),
        ("tokenizer.ggml.add_bos_token", BOOL, True),
    ]


def stories_tensors(w, p, kind):
    named = [("token_embd.weight", w["emb"]), ("output_norm.weight", w["norm"])]
    if not p["shared"]:
        named.append(("output.weight", w["cls"]))
    parts = [("attn_norm", "att_norm"), ("attn_q", "wq"), ("attn_k", "wk"), ("attn_v", "wv"),
             ("attn_output", "wo"), ("ffn_norm", "ffn_norm"), ("ffn_gate", "w1"),
             ("ffn_down", "w2"), ("ffn_up", "w3")]
    for layer in range(p["layers"]):
        named += [(f"blk.{layer}.{gguf}.weight", w[key][layer]) for gguf, key in parts]
    out = []
    for name, tensor in named:
        values = tensor.numpy().astype(f32)
        chosen = tensor_type(values.shape, kind)
        # llama-quantize keeps the output head at 6 bits or more (Q6_K, Q8_0 where rows are not
        # whole 256-blocks); stories260K's head is its tied embedding.
        if name == "token_embd.weight" and p["shared"] and kind == "Q4_0":
            chosen = tensor_type(values.shape, "Q8_0")
        out.append((name, list(values.shape), chosen, encode_tensor(values, chosen)))
    return out


def write_wide(out_dir):
    rng = np.random.default_rng(256)
    p = dict(dim=256, hidden=512, layers=1, heads=4, kv_heads=2, vocab=512, seq_len=64,
             head_size=64, shared=True)
    matrix = lambda rows, cols: (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(f32)
    gain = lambda n: (1 + 0.1 * rng.standard_normal(n)).astype(f32)
    wrap = lambda a: [_Tensor(a)]
    w = {"emb": _Tensor(rng.standard_normal((512, 256)).astype(f32)), "norm": _Tensor(gain(256)),
         "att_norm": wrap(gain(256)), "ffn_norm": wrap(gain(256)),
         "wq": wrap(matrix(256, 256)), "wk": wrap(matrix(128, 256)), "wv": wrap(matrix(128, 256)),
         "wo": wrap(matrix(256, 256)), "w1": wrap(matrix(512, 256)),
         "w2": wrap(matrix(256, 512)), "w3": wrap(matrix(512, 256))}
    metadata = stories_metadata(p, "wide random llama")
    for kind in ["F32", "Q8_0", "Q4_K", "Q5_K", "Q6_K"]:
        write_gguf(out_dir / f"wide-{kind.lower()}.gguf", metadata, stories_tensors(w, p, kind))


class _Tensor:
    """A numpy array where stories_tensors expects a torch tensor (it calls .numpy())."""

    def __init__(self, array):
        self.array = array

    def numpy(self):
        return self.array


def write_types(out_dir):
    rng = np.random.default_rng(29)
    tensors, reference = [], []
    for kind in ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K", "Q5_K", "Q6_K"]:
        shape = [3, 512]
        values = (rng.standard_normal(shape) * rng.uniform(0.01, 2, (3, 1))).astype(f32)
        values[0, :40] = 0  # a block of zeros (scale 0)
        data = encode_tensor(values, kind)
        tensors.append((f"t.{kind}", shape, kind, data))
        if kind in BLOCK:
            reference.append(dequantize(data, kind, values.size))
        else:
            dtype = {"F32": f32, "F16": np.float16}.get(kind)
            reference.append(np.frombuffer(data, dtype).astype(f32) if dtype else
                             (np.frombuffer(data, np.uint16).astype(np.uint32) << 16).view(f32))
    write_gguf(out_dir / "types.gguf", [("general.alignment", U32, ALIGNMENT)], tensors)
    (out_dir / "types.f32").write_bytes(np.concatenate(reference).astype("<f4").tobytes())


# --- the tiny Hugging Face fixtures --------------------------------------------------------------
def read_safetensors(path):
    data = Path(path).read_bytes()
    size = struct.unpack_from("<Q", data, 0)[0]
    header = json.loads(data[8:8 + size])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[8 + size + begin:8 + size + end]
        if info["dtype"] == "BF16":
            values = (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(f32)
        else:
            values = np.frombuffer(raw, {"F32": f32, "F16": np.float16}[info["dtype"]])
        out[name] = values.astype(f32).reshape(info["shape"])
    return out


def permute(weights, heads):
    """llama.cpp's LlamaModel.permute: each head's rows from rotate_half to interleaved pairs."""
    shape = weights.shape
    return (weights.reshape(heads, 2, shape[0] // heads // 2, *shape[1:])
            .swapaxes(1, 2).reshape(shape))


LLAMA_PARTS = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
               "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
               "self_attn.o_proj": "attn_output", "post_attention_layernorm": "ffn_norm",
               "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
GPT2_PARTS = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
              "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}


def llama_tensors(state, config):
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads", heads)
    named = [("token_embd.weight", state["model.embed_tokens.weight"]),
             ("output_norm.weight", state["model.norm.weight"])]
    if not config.get("tie_word_embeddings", False):
        named.append(("output.weight", state["lm_head.weight"]))
    for layer in range(config["num_hidden_layers"]):
        for hf, gguf in LLAMA_PARTS.items():
            for kind in ("weight", "bias"):
                name = f"model.layers.{layer}.{hf}.{kind}"
                if name not in state:
                    continue
                values = state[name]
                if config["model_type"] == "llama" and gguf in ("attn_q", "attn_k"):
                    values = permute(values, heads if gguf == "attn_q" else kv)
                named.append((f"blk.{layer}.{gguf}.{kind}", values))
    return named


def gpt2_tensors(state, config):
    state = {k.removeprefix("transformer."): v for k, v in state.items()}
    named = [("token_embd.weight", state["wte.weight"]),
             ("position_embd.weight", state["wpe.weight"]),
             ("output_norm.weight", state["ln_f.weight"]),
             ("output_norm.bias", state["ln_f.bias"]),
             ("output.weight", state["wte.weight"])]  # llama.cpp's copy of the tied head
    for layer in range(config["n_layer"]):
        for hf, gguf in GPT2_PARTS.items():
            weight = state[f"h.{layer}.{hf}.weight"]
            if weight.ndim == 2:
                weight = weight.T  # Conv1D [in, out] -> [out, in]
            named += [(f"blk.{layer}.{gguf}.weight", np.ascontiguousarray(weight)),
                      (f"blk.{layer}.{gguf}.bias", state[f"h.{layer}.{hf}.bias"])]
    return named


def hf_tokenizer_metadata(folder, pre):
    tokenizer = json.loads((folder / "tokenizer.json").read_text())
    config = json.loads((folder / "tokenizer_config.json").read_text())
    vocab = dict(tokenizer["model"]["vocab"])
    special = set()
    for added in tokenizer["added_tokens"]:
        vocab[added["content"]] = added["id"]
        if added["special"]:
            special.add(added["id"])
    tokens = [None] * (max(vocab.values()) + 1)
    for token, i in vocab.items():
        tokens[i] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in tokenizer["model"]["merges"]]
    metadata = [
        ("tokenizer.ggml.model", STRING, "gpt2"),
        ("tokenizer.ggml.pre", STRING, pre),
        ("tokenizer.ggml.tokens", ARRAY, (STRING, tokens)),
        ("tokenizer.ggml.token_type", ARRAY, (I32, [3 if i in special else 1
                                                    for i in range(len(tokens))])),
        ("tokenizer.ggml.merges", ARRAY, (STRING, merges)),
    ]
    for field in ("bos", "eos"):
        token = config.get(f"{field}_token")
        if isinstance(token, str):
            metadata.append((f"tokenizer.ggml.{field}_token_id", U32, vocab[token]))
    return metadata


def hf_fixture(folder, name):
    config = json.loads((folder / "config.json").read_text())
    state = read_safetensors(folder / "model.safetensors")
    arch = config["model_type"]
    if arch == "gpt2":
        h = config["n_embd"]
        metadata = [
            ("general.architecture", STRING, "gpt2"),
            ("gpt2.context_length", U32, config["n_positions"]),
            ("gpt2.embedding_length", U32, h),
            ("gpt2.feed_forward_length", U32, config.get("n_inner") or 4 * h),
            ("gpt2.block_count", U32, config["n_layer"]),
            ("gpt2.attention.head_count", U32, config["n_head"]),
            ("gpt2.attention.layer_norm_epsilon", F32V, config["layer_norm_epsilon"]),
        ]
        return metadata + hf_tokenizer_metadata(folder, "gpt-2"), gpt2_tensors(state, config)
    heads = config["num_attention_heads"]
    metadata = [
        ("general.architecture", STRING, arch),
        (f"{arch}.context_length", U32, config["max_position_embeddings"]),
        (f"{arch}.embedding_length", U32, config["hidden_size"]),
        (f"{arch}.feed_forward_length", U32, config["intermediate_size"]),
        (f"{arch}.block_count", U32, config["num_hidden_layers"]),
        (f"{arch}.attention.head_count", U32, heads),
        (f"{arch}.attention.head_count_kv", U32, config.get("num_key_value_heads", heads)),
        (f"{arch}.rope.freq_base", F32V, config.get("rope_theta", 10000.0)),
        (f"{arch}.attention.layer_norm_rms_epsilon", F32V, config["rms_norm_eps"]),
    ]
    pre = {"smollm2": "smollm", "qwen2": "qwen2"}[name]
    return metadata + hf_tokenizer_metadata(folder, pre), llama_tensors(state, config)


def write_fixtures(out_dir, tiny_dir):
    for name in ["smollm2", "qwen2", "gpt2"]:
        metadata, named = hf_fixture(Path(tiny_dir) / f"{name}.safetensors", name)
        for kind in ["F32", "F16", "BF16", "Q8_0", "Q4_0"]:
            tensors = []
            for tensor_name, values in named:
                chosen = kind if values.ndim == 2 else "F32"
                chosen = tensor_type(values.shape, chosen)
                tensors.append((tensor_name, list(values.shape), chosen,
                                encode_tensor(values, chosen)))
            write_gguf(out_dir / f"{name}-{kind.lower()}.gguf", metadata, tensors)


def main(out_dir, tiny_dir=None):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    p, w = read_checkpoint(BUNDLED / "stories260K.bin")
    metadata = stories_metadata(p)
    for kind in ["F32", "Q8_0", "Q4_0"]:
        write_gguf(out_dir / f"stories260K-{kind.lower()}.gguf", metadata,
                   stories_tensors(w, p, kind))
    write_types(out_dir)
    write_wide(out_dir)
    if tiny_dir:
        write_fixtures(out_dir, tiny_dir)


if __name__ == "__main__":
    main(*sys.argv[1:3])
