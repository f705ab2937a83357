#!/usr/bin/env python3
"""Tiny models in the exact Hugging Face layout, for the forward-pass tests.

Each model folder holds config.json as the Hub has it, a real tokenizer.json +
tokenizer_config.json (tests/models/tokenizers.py), and seeded random weights under the key
names real checkpoints use, in one of the two weight formats:

  <name>.safetensors/model.safetensors   written by hand below (the safetensors format)
  <name>.bin/pytorch_model.bin           torch.save of the state dict (a zip holding a pickle)

Models (both formats each):
  gpt2          the original GPT-2 repository's layout: no "transformer." prefix, h.N.attn.bias
                and h.N.attn.masked_bias buffers
  gpt2-lmhead   GPT2LMHeadModel's layout: "transformer." prefix and the tied lm_head.weight
  gpt-neo       GPTNeoForCausalLM (TinyStories' family): global, local, global layers with a
                window of 3, q/k/v without bias, the masked_bias buffers of older files
  bert          BertForMaskedLM: "bert." prefix, position_ids buffer, cls.predictions.* head with
                its tied decoder
  bert-gamma    an old BertForPreTraining checkpoint: LayerNorm gamma/beta, pooler and
                cls.seq_relationship (both unused by a masked LM)
  bert-base     BertModel: no prefix and no MLM head (attention only, no predictions)
  smollm2       LlamaForCausalLM in SmolLM2-135M's layout: "model." prefix, 6 query heads over
                2 K/V heads, no biases, rope_theta 1e5, the LM head tied (no lm_head.weight),
                bfloat16 weights as the Hub's files have them
  qwen2         Qwen2ForCausalLM in Qwen2.5-0.5B's layout: 4 query heads over 2 K/V heads, q/k/v
                biases, rope_theta 1e6, tied, use_sliding_window false, bfloat16
  llama-untied  LlamaForCausalLM with lm_head.weight (tie_word_embeddings false), attention_bias
                and mlp_bias, head_dim 12 (not hidden / heads) and Llama 3.1's rope_scaling; f32
and in safetensors only: qwen2-sliding (use_sliding_window with max_window_layers 1: layer 1
sees 3 keys), and broken GPT-2 files: gpt2-bad-shape (a tensor of the wrong shape),
gpt2-missing (a tensor left out), gpt2-nan (a NaN among the weights).

  /usr/bin/python3 tests/models/make_tiny_models.py OUT_DIR
"""

import collections
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tokenizers  # noqa: E402  (tests/models/tokenizers.py)

GPT2_SIZES = dict(n_embd=24, n_head=3, n_layer=2, n_positions=32)
NEO_SIZES = dict(hidden_size=16, num_heads=2, num_layers=3, max_position_embeddings=32,
                 window_size=3)
SMOLLM2_SIZES = dict(hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                     num_hidden_layers=2, intermediate_size=64, max_position_embeddings=64)
QWEN2_SIZES = dict(hidden_size=32, num_attention_heads=4, num_key_value_heads=2,
                   num_hidden_layers=2, intermediate_size=56, max_position_embeddings=64)
BERT_SIZES = dict(hidden_size=32, num_attention_heads=4, num_hidden_layers=2,
                  intermediate_size=48, max_position_embeddings=24, type_vocab_size=2)


class Weights:
    """Seeded random tensors: matrices ~ N(0, 1 / fan_in) (scaled up where attention would
    otherwise be near uniform), vectors ~ N(0, 0.01), norm gains ~ 1 + N(0, 0.01)."""

    def __init__(self, seed):
        self.generator = torch.Generator().manual_seed(seed)

    def normal(self, *shape, std):
        return torch.randn(*shape, generator=self.generator) * std

    def matrix(self, rows, cols, fan_in):
        return self.normal(rows, cols, std=1.0 / fan_in ** 0.5)

    def vector(self, n, std=0.1):
        return self.normal(n, std=std)

    def gain(self, n):
        return 1.0 + self.normal(n, std=0.1)


def gpt2_state(config, vocab, prefix, seed=1):
    w = Weights(seed)
    h, inner, positions = config["n_embd"], 4 * config["n_embd"], config["n_positions"]
    state = collections.OrderedDict()
    state[prefix + "wte.weight"] = w.normal(vocab, h, std=0.5)
    state[prefix + "wpe.weight"] = w.normal(positions, h, std=0.2)
    for layer in range(config["n_layer"]):
        p = f"{prefix}h.{layer}."
        state[p + "ln_1.weight"] = w.gain(h)
        state[p + "ln_1.bias"] = w.vector(h)
        if not prefix:  # the original repository's files carry the mask buffers
            state[p + "attn.bias"] = torch.tril(torch.ones(positions, positions)).view(
                1, 1, positions, positions)
            state[p + "attn.masked_bias"] = torch.tensor(-1e4)
        # Conv1D weights are [in, out]; c_attn packs q, k, v along out.
        state[p + "attn.c_attn.weight"] = w.matrix(h, 3 * h, h) * 2.0
        state[p + "attn.c_attn.bias"] = w.vector(3 * h)
        state[p + "attn.c_proj.weight"] = w.matrix(h, h, h)
        state[p + "attn.c_proj.bias"] = w.vector(h)
        state[p + "ln_2.weight"] = w.gain(h)
        state[p + "ln_2.bias"] = w.vector(h)
        state[p + "mlp.c_fc.weight"] = w.matrix(h, inner, h)
        state[p + "mlp.c_fc.bias"] = w.vector(inner)
        state[p + "mlp.c_proj.weight"] = w.matrix(inner, h, inner)
        state[p + "mlp.c_proj.bias"] = w.vector(h)
    state[prefix + "ln_f.weight"] = w.gain(h)
    state[prefix + "ln_f.bias"] = w.vector(h)
    if prefix:
        state["lm_head.weight"] = state[prefix + "wte.weight"]  # tied: the same tensor
    return state


def gpt2_config(vocab, eos):
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": eos,
        "embd_pdrop": 0.1,
        "eos_token_id": eos,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": GPT2_SIZES["n_positions"],
        **GPT2_SIZES,
        "resid_pdrop": 0.1,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": vocab,
    }


def neo_state(config, vocab, seed=2):
    w = Weights(seed)
    h, positions = config["hidden_size"], config["max_position_embeddings"]
    inner = 4 * h
    state = collections.OrderedDict()
    state["transformer.wte.weight"] = w.normal(vocab, h, std=0.5)
    state["transformer.wpe.weight"] = w.normal(positions, h, std=0.2)
    for layer, kind in enumerate(config["attention_layers"]):
        p = f"transformer.h.{layer}."
        state[p + "ln_1.weight"] = w.gain(h)
        state[p + "ln_1.bias"] = w.vector(h)
        bias = torch.tril(torch.ones(positions, positions, dtype=torch.bool))
        if kind == "local":
            bias = bias ^ torch.tril(bias, -config["window_size"])
        state[p + "attn.attention.bias"] = bias.view(1, 1, positions, positions)
        state[p + "attn.attention.masked_bias"] = torch.tensor(-1e9)
        # nn.Linear weights are [out, in]. GPT-Neo does not scale by 1/sqrt(d), so q and k stay
        # small enough for the attention not to be one-hot.
        for name in ("k_proj", "v_proj", "q_proj"):
            state[p + f"attn.attention.{name}.weight"] = w.matrix(h, h, h) * 0.7
        state[p + "attn.attention.out_proj.weight"] = w.matrix(h, h, h)
        state[p + "attn.attention.out_proj.bias"] = w.vector(h)
        state[p + "ln_2.weight"] = w.gain(h)
        state[p + "ln_2.bias"] = w.vector(h)
        state[p + "mlp.c_fc.weight"] = w.matrix(inner, h, h)
        state[p + "mlp.c_fc.bias"] = w.vector(inner)
        state[p + "mlp.c_proj.weight"] = w.matrix(h, inner, inner)
        state[p + "mlp.c_proj.bias"] = w.vector(h)
    state["transformer.ln_f.weight"] = w.gain(h)
    state["transformer.ln_f.bias"] = w.vector(h)
    state["lm_head.weight"] = state["transformer.wte.weight"]
    return state


def neo_config(vocab, eos):
    layers = ["global", "local", "global"]
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPTNeoForCausalLM"],
        "attention_dropout": 0,
        "attention_layers": layers,
        "attention_types": [[["global", "local"], 1], [["global"], 1]],
        "bos_token_id": eos,
        "embed_dropout": 0,
        "eos_token_id": eos,
        "gradient_checkpointing": False,
        "initializer_range": 0.02,
        "intermediate_size": None,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt_neo",
        **NEO_SIZES,
        "resid_dropout": 0,
        "torch_dtype": "float32",
        "transformers_version": "4.28.0",
        "use_cache": True,
        "vocab_size": vocab,
    }


def bert_state(config, vocab, prefix="bert.", head=True, gamma=False, pretraining=False, seed=3):
    w = Weights(seed)
    h, inner = config["hidden_size"], config["intermediate_size"]
    norm_w, norm_b = ("gamma", "beta") if gamma else ("weight", "bias")
    state = collections.OrderedDict()

    def norm(name):
        state[name + "." + norm_w] = w.gain(h)
        state[name + "." + norm_b] = w.vector(h)

    def linear(name, out, fan_in, scale=1.0):
        state[name + ".weight"] = w.matrix(out, fan_in, fan_in) * scale  # [out, in]
        state[name + ".bias"] = w.vector(out)

    e = prefix + "embeddings."
    state[e + "word_embeddings.weight"] = w.normal(vocab, h, std=0.5)
    state[e + "position_embeddings.weight"] = w.normal(config["max_position_embeddings"], h,
                                                       std=0.2)
    state[e + "token_type_embeddings.weight"] = w.normal(config["type_vocab_size"], h, std=0.2)
    norm(e + "LayerNorm")
    if not gamma:
        state[e + "position_ids"] = torch.arange(config["max_position_embeddings"]).expand(1, -1)
    for layer in range(config["num_hidden_layers"]):
        p = f"{prefix}encoder.layer.{layer}."
        for name in ("query", "key", "value"):
            linear(p + "attention.self." + name, h, h, scale=1.5)
        linear(p + "attention.output.dense", h, h)
        norm(p + "attention.output.LayerNorm")
        linear(p + "intermediate.dense", inner, h)
        linear(p + "output.dense", h, inner)
        norm(p + "output.LayerNorm")
    if pretraining or not head:
        linear(prefix + "pooler.dense", h, h)
    if head:
        linear("cls.predictions.transform.dense", h, h)
        norm("cls.predictions.transform.LayerNorm")
        state["cls.predictions.bias"] = w.vector(vocab)
        state["cls.predictions.decoder.weight"] = state[e + "word_embeddings.weight"]  # tied
    if pretraining:
        linear("cls.seq_relationship", 2, h)
    return state


def bert_config(vocab, architecture="BertForMaskedLM"):
    return {
        "architectures": [architecture],
        "attention_probs_dropout_prob": 0.1,
        "gradient_checkpointing": False,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        **BERT_SIZES,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "model_type": "bert",
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "transformers_version": "4.6.0.dev0",
        "use_cache": True,
        "vocab_size": vocab,
    }


def llama_state(config, vocab, seed):
    """LlamaForCausalLM / Qwen2ForCausalLM's state dict; nn.Linear weights [out, in]."""
    w = Weights(seed)
    h, inner = config["hidden_size"], config["intermediate_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    d = config.get("head_dim") or h // heads
    qwen2 = config["model_type"] == "qwen2"
    qkv_bias = qwen2 or config.get("attention_bias", False)
    out_bias = not qwen2 and config.get("attention_bias", False)
    mlp_bias = not qwen2 and config.get("mlp_bias", False)
    state = collections.OrderedDict()

    def linear(name, out, fan_in, bias):
        state[name + ".weight"] = w.matrix(out, fan_in, fan_in)
        if bias:
            state[name + ".bias"] = w.vector(out)

    state["model.embed_tokens.weight"] = w.normal(vocab, h, std=0.5)
    for layer in range(config["num_hidden_layers"]):
        p = f"model.layers.{layer}."
        state[p + "input_layernorm.weight"] = w.gain(h)
        # After the RMSNorm q and k are O(1) per entry: logits q.k / sqrt(d) of spread ~1.
        linear(p + "self_attn.q_proj", heads * d, h, qkv_bias)
        linear(p + "self_attn.k_proj", kv * d, h, qkv_bias)
        linear(p + "self_attn.v_proj", kv * d, h, qkv_bias)
        linear(p + "self_attn.o_proj", h, heads * d, out_bias)
        state[p + "post_attention_layernorm.weight"] = w.gain(h)
        linear(p + "mlp.gate_proj", inner, h, mlp_bias)
        linear(p + "mlp.up_proj", inner, h, mlp_bias)
        linear(p + "mlp.down_proj", h, inner, mlp_bias)
    state["model.norm.weight"] = w.gain(h)
    if config["tie_word_embeddings"]:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied: the same tensor
    else:
        linear("lm_head", vocab, h, False)
    return state


def smollm2_config(vocab):
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": 0,
        "eos_token_id": 0,
        "hidden_act": "silu",
        **SMOLLM2_SIZES,
        "initializer_range": 0.041666666666666664,
        "is_llama_config": True,
        "model_type": "llama",
        "pretraining_tp": 1,
        "rms_norm_eps": 1e-05,
        "rope_interleaved": False,
        "rope_scaling": None,
        "rope_theta": 100000,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.42.3",
        "use_cache": True,
        "vocab_size": vocab,
    }


def qwen2_config(vocab, eos, sliding=False):
    return {
        "architectures": ["Qwen2ForCausalLM"],
        "attention_dropout": 0.0,
        "bos_token_id": eos,
        "eos_token_id": eos,
        "hidden_act": "silu",
        **QWEN2_SIZES,
        "initializer_range": 0.02,
        "max_window_layers": 1 if sliding else 2,
        "model_type": "qwen2",
        "rms_norm_eps": 1e-06,
        "rope_theta": 1000000.0,
        "sliding_window": 3 if sliding else 64,
        "tie_word_embeddings": True,
        "torch_dtype": "bfloat16",
        "transformers_version": "4.40.1",
        "use_cache": True,
        "use_mrope": False,
        "use_sliding_window": sliding,
        "vocab_size": vocab,
    }


def llama_untied_config(vocab):
    config = smollm2_config(vocab)
    config.update({
        "attention_bias": True,
        "mlp_bias": True,
        "head_dim": 12,
        "num_attention_heads": 4,
        "rope_theta": 500000.0,
        # Llama 3.1's; with head_dim 12 every band (kept, blended, stretched) has a frequency.
        "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    })
    return config


SAFETENSORS_DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
                      torch.int64: "I64", torch.bool: "BOOL"}


def write_safetensors(path, state):
    """The safetensors format: u64 little-endian header length, a JSON header of
    {name: {dtype, shape, data_offsets}}, then each tensor's raw little-endian bytes. Shared
    tensors are stored once, as the Hub's files do (the tied head is dropped)."""
    header, blobs, offset, seen = {}, [], 0, {}
    for name, tensor in state.items():
        key = (tensor.data_ptr(), tuple(tensor.shape), tensor.dtype)
        if key in seen:
            continue
        seen[key] = name
        tensor = tensor.contiguous()
        # numpy has no bfloat16: its bits go out as the int16 they are.
        raw = tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor
        data = raw.numpy().tobytes()
        header[name] = {"dtype": SAFETENSORS_DTYPES[tensor.dtype], "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    header["__metadata__"] = {"format": "pt"}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)


def to_bfloat16(state):
    """The state in bfloat16, tied tensors still shared (the Hub's llama-family files are)."""
    converted = {}
    return collections.OrderedDict(
        (name, converted.setdefault(t.data_ptr(), t.to(torch.bfloat16))) for name, t in state.items())


def write_model(out_dir, name, config, state, tokenizer, formats=("safetensors", "bin")):
    for fmt in formats:
        folder = os.path.join(out_dir, f"{name}.{fmt}")
        os.makedirs(folder, exist_ok=True)
        tokenizers.write_tokenizer(folder, tokenizer)
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as f:
            json.dump(config, f, indent=2)
        if fmt == "safetensors":
            write_safetensors(os.path.join(folder, "model.safetensors"), state)
        else:
            torch.save(state, os.path.join(folder, "pytorch_model.bin"))


def main(out_dir):
    gpt2_tok = tokenizers.gpt2_tokenizer(max_length=GPT2_SIZES["n_positions"])
    gpt2_vocab = gpt2_tok[2]
    eos = gpt2_tok[0]["model"]["vocab"]["<|endoftext|>"]
    gpt2 = gpt2_config(gpt2_vocab, eos)
    write_model(out_dir, "gpt2", gpt2, gpt2_state(gpt2, gpt2_vocab, ""), gpt2_tok)
    write_model(out_dir, "gpt2-lmhead", gpt2, gpt2_state(gpt2, gpt2_vocab, "transformer."),
                gpt2_tok)
    bad = gpt2_state(gpt2, gpt2_vocab, "transformer.")
    bad["transformer.h.1.mlp.c_fc.weight"] = bad["transformer.h.1.mlp.c_fc.weight"][:, :40]
    write_model(out_dir, "gpt2-bad-shape", gpt2, bad, gpt2_tok, formats=("safetensors",))
    missing = gpt2_state(gpt2, gpt2_vocab, "transformer.")
    del missing["transformer.h.0.ln_2.bias"]
    write_model(out_dir, "gpt2-missing", gpt2, missing, gpt2_tok, formats=("safetensors",))
    nan = gpt2_state(gpt2, gpt2_vocab, "transformer.")
    nan["transformer.h.1.attn.c_proj.weight"][2, 5] = float("nan")
    write_model(out_dir, "gpt2-nan", gpt2, nan, gpt2_tok, formats=("safetensors",))

    neo_tok = tokenizers.gpt2_tokenizer(max_length=NEO_SIZES["max_position_embeddings"])
    neo = neo_config(gpt2_vocab, eos)
    write_model(out_dir, "gpt-neo", neo, neo_state(neo, gpt2_vocab), neo_tok)

    bert_tok = tokenizers.bert_tokenizer(max_length=BERT_SIZES["max_position_embeddings"])
    bert_vocab = bert_tok[2]
    bert = bert_config(bert_vocab)
    write_model(out_dir, "bert", bert, bert_state(bert, bert_vocab), bert_tok)
    write_model(out_dir, "bert-gamma", bert_config(bert_vocab, "BertForPreTraining"),
                bert_state(bert, bert_vocab, gamma=True, pretraining=True, seed=4), bert_tok)
    write_model(out_dir, "bert-base", bert_config(bert_vocab, "BertModel"),
                bert_state(bert, bert_vocab, prefix="", head=False, seed=5), bert_tok)

    smol_tok = tokenizers.smollm2_tokenizer()
    smol = smollm2_config(smol_tok[2])
    write_model(out_dir, "smollm2", smol, to_bfloat16(llama_state(smol, smol_tok[2], seed=6)),
                smol_tok)
    untied = llama_untied_config(smol_tok[2])
    write_model(out_dir, "llama-untied", untied, llama_state(untied, smol_tok[2], seed=7), smol_tok)
    qwen_tok = tokenizers.qwen2_tokenizer()
    qwen_eos = qwen_tok[0]["model"]["vocab"]["<|endoftext|>"]
    qwen = qwen2_config(qwen_tok[2], qwen_eos)
    write_model(out_dir, "qwen2", qwen, to_bfloat16(llama_state(qwen, qwen_tok[2], seed=8)),
                qwen_tok)
    write_model(out_dir, "qwen2-sliding", qwen2_config(qwen_tok[2], qwen_eos, sliding=True),
                llama_state(qwen, qwen_tok[2], seed=9), qwen_tok, formats=("safetensors",))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
