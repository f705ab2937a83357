#!/usr/bin/env python3
"""GGUF files with seeded random weights in the exact shapes of Qwen2.5-0.5B and Llama-3.2-1B,
for big-model.mjs (does a model of that size load in wasm32, and how long a text runs).

  /usr/bin/python3 bench/models/build_big_gguf.py OUT_DIR NAME [NAME ...]

NAME is one of
  qwen2.5-0.5b-q8_0, qwen2.5-0.5b-q4_0   Qwen2.5-0.5B's config (24 layers, hidden 896, 14 heads
                                         and 2 K/V heads of 64, intermediate 4864, vocab 151936,
                                         tied embeddings, q/k/v biases, rope_theta 1e6)
  llama3.2-1b-q8_0, llama3.2-1b-q4_0     Llama-3.2-1B's (16 layers, hidden 2048, 32 heads and
                                         8 K/V heads of 64, intermediate 8192, vocab 128256,
                                         tied embeddings, rope_theta 5e5)
Each file is ~0.4-1.4 GB (written in memory first: ~3 GB of RAM for the largest).

The tensors are laid out as llama.cpp's converter and llama-quantize lay them out: every matrix
in the file's type, norms and biases F32; in a Q4_0 file the tied embedding (the output head)
is Q8_0, as llama-quantize keeps a head at 6 bits or more (it picks Q6_K where rows are whole
256-value blocks, Llama's 2048; Qwen's 896 falls back to Q8_0; make_gguf.py's Q6_K quantiser is
a per-block Python loop, far too slow for 262M values, and the loader widens both alike).
Real Llama-3.2 GGUFs also carry rope_freqs.weight (Llama 3.1-style frequency scaling), which
the loader refuses today: these files leave it out, so they measure memory, not that gap.
Weights are N(0, 0.02) (GPT-2's init), norms 1, biases N(0, 0.02): the forward stays finite.
The tokenizer is tests/models/tokenizers.py's tiny byte-level BPE (120 merges) as "gpt2"
metadata (pre "qwen2" / "llama-bpe"), filled up to the vocabulary with pieces it never produces
(a random model predicts any id, and every id needs a token), as build_models.py's
qwen2.5-0.5b-shape does. The GGUF writer and quantisers are tests/models/make_gguf.py's.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests/models"))
import make_gguf  # noqa: E402
import tokenizers  # noqa: E402
from make_gguf import F32V, STRING, U32  # noqa: E402

SHAPES = {
    "qwen2.5-0.5b": dict(arch="qwen2", pre="qwen2", hidden=896, layers=24, heads=14, kv_heads=2,
                         intermediate=4864, vocab=151936, context=32768, rope_theta=1e6,
                         eps=1e-6, qkv_bias=True),
    "llama3.2-1b": dict(arch="llama", pre="llama-bpe", hidden=2048, layers=16, heads=32,
                        kv_heads=8, intermediate=8192, vocab=128256, context=131072,
                        rope_theta=5e5, eps=1e-5, qkv_bias=False),
}
KINDS = {"q8_0": "Q8_0", "q4_0": "Q4_0"}
HEAD_DIM = 64
INIT_STD = 0.02
ROWS_PER_CHUNK = 4096  # bounds the float32 and quantiser temporaries of one tensor


def tokenizer_metadata(shape):
    tokenizer = tokenizers.qwen2_tokenizer(merges=120, max_length=shape["context"])
    vocab = tokenizer[0]["model"]["vocab"]  # the special tokens among them
    for i in range(shape["vocab"] - len(vocab)):
        vocab[f"filler{i}"] = len(vocab)
    with tempfile.TemporaryDirectory() as folder:
        tokenizers.write_tokenizer(folder, tokenizer)
        return make_gguf.hf_tokenizer_metadata(Path(folder), shape["pre"])


def metadata(name, shape):
    arch = shape["arch"]
    return [
        ("general.architecture", STRING, arch),
        ("general.name", STRING, f"{name} shape, random weights"),
        ("general.alignment", U32, make_gguf.ALIGNMENT),
        (f"{arch}.context_length", U32, shape["context"]),
        (f"{arch}.embedding_length", U32, shape["hidden"]),
        (f"{arch}.feed_forward_length", U32, shape["intermediate"]),
        (f"{arch}.block_count", U32, shape["layers"]),
        (f"{arch}.attention.head_count", U32, shape["heads"]),
        (f"{arch}.attention.head_count_kv", U32, shape["kv_heads"]),
        (f"{arch}.rope.dimension_count", U32, HEAD_DIM),
        (f"{arch}.rope.freq_base", F32V, shape["rope_theta"]),
        (f"{arch}.attention.layer_norm_rms_epsilon", F32V, shape["eps"]),
    ] + tokenizer_metadata(shape)


def random_tensor(rng, shape, kind):
    """(type, bytes) of a seeded N(0, INIT_STD) tensor, quantised a chunk of rows at a time."""
    rows, cols = (shape[0], shape[1]) if len(shape) == 2 else (1, shape[0])
    chosen = make_gguf.tensor_type(shape, kind)
    parts = []
    for start in range(0, rows, ROWS_PER_CHUNK):
        count = min(ROWS_PER_CHUNK, rows - start)
        values = rng.standard_normal((count, cols), dtype=np.float32) * np.float32(INIT_STD)
        parts.append(make_gguf.encode_tensor(values, chosen))
    return chosen, b"".join(parts)


def tensors(shape, kind, seed):
    rng = np.random.default_rng(seed)
    h, q, kv, ffn = (shape["hidden"], shape["heads"] * HEAD_DIM, shape["kv_heads"] * HEAD_DIM,
                     shape["intermediate"])
    ones = lambda n: ("F32", np.ones(n, np.float32).tobytes())  # noqa: E731
    # The tied embedding is the output head: kept at 8 bits in a 4-bit file (see the docstring).
    embedding_kind = "Q8_0" if kind == "Q4_0" else kind
    out = [("token_embd.weight", [shape["vocab"], h],
            *random_tensor(rng, [shape["vocab"], h], embedding_kind)),
           ("output_norm.weight", [h], *ones(h))]
    for layer in range(shape["layers"]):
        parts = [("attn_norm.weight", [h], ones(h)),
                 ("attn_q.weight", [q, h], None), ("attn_k.weight", [kv, h], None),
                 ("attn_v.weight", [kv, h], None)]
        if shape["qkv_bias"]:
            parts += [("attn_q.bias", [q], None), ("attn_k.bias", [kv], None),
                      ("attn_v.bias", [kv], None)]
        parts += [("attn_output.weight", [h, q], None), ("ffn_norm.weight", [h], ones(h)),
                  ("ffn_gate.weight", [ffn, h], None), ("ffn_up.weight", [ffn, h], None),
                  ("ffn_down.weight", [h, ffn], None)]
        for part, dims, fixed in parts:
            chosen, data = fixed or random_tensor(rng, dims, kind)
            out.append((f"blk.{layer}.{part}", dims, chosen, data))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[2:]:
        model, _, kind = name.rpartition("-")
        if model not in SHAPES or kind not in KINDS:
            sys.exit(f"unknown name {name!r}\n{__doc__}")
        shape = SHAPES[model]
        path = out_dir / f"{name}.gguf"
        make_gguf.write_gguf(path, metadata(name, shape), tensors(shape, KINDS[kind], seed=29))
        print(f"{path}: {path.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
