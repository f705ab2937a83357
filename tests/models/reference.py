#!/usr/bin/env python3
"""An independent reference forward pass for the tiny models, in plain torch ops (float64),
written from the transformers library's modelling code (GPT2LMHeadModel, GPTNeoForCausalLM,
BertForMaskedLM, LlamaForCausalLM, Qwen2ForCausalLM), not from attnlens' C++.

Reads one JSON request on stdin and writes one JSON answer on stdout:

  request  {"cases": [{"folder": ..., "ids": [...], "types": [...] | null,
                       "masks": null | ["causal+local:2", ...] (one per layer),
                       "projections": null | layer,
                       "ablate": null | [[layer, head, "zero" | "mean"], ...],
                       "lens": false | true}]}
  answer   {"cases": [{"attention": [layers * heads * N * N floats],
                       "logits": [N * vocab floats] | null,
                       "projections": [3 * heads * N * head_dim floats] | null,
                       "lens": [(layers + 1) * N * vocab floats] | null}]}
                       (projections: that layer's q, k and v, each head-major [heads, N, head_dim];
                       lens: the logits of each hidden state, the embeddings' then each layer's
                       output, through the model's final norm and LM head)

An ablated head's output (its head_dim columns of the merged heads, the output projection's
input) is set to 0 ("zero") or to its mean over the N positions ("mean"), as TransformerLens's
hook on hook_z does.

Weights come from the folder's pytorch_model.bin (torch.load) or model.safetensors (read here).
"""

import json
import math
import os
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64,
          "BOOL": np.bool_, "BF16": np.uint16}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    state = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end], dtype=DTYPES[entry["dtype"]])
        if entry["dtype"] == "BF16":  # the top half of a float32's bits
            array = (array.astype(np.uint32) << 16).view(np.float32)
        state[name] = torch.from_numpy(array.copy().reshape(entry["shape"]))
    return state


def load_state(folder):
    bin_path = os.path.join(folder, "pytorch_model.bin")
    if os.path.exists(bin_path):
        return torch.load(bin_path, map_location="cpu", weights_only=True)
    return read_safetensors(os.path.join(folder, "model.safetensors"))


def weights(state, prefixes):
    """Float tensors in float64, by name without the model's prefix; old gamma/beta -> weight/bias
    (as PreTrainedModel's loading renames them)."""
    out = {}
    for name, tensor in state.items():
        for prefix in prefixes:
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        if name.endswith(".gamma"):
            name = name[:-6] + ".weight"
        elif name.endswith(".beta"):
            name = name[:-5] + ".bias"
        if tensor.is_floating_point():
            out[name] = tensor.double()
    return out


def layer_norm(x, w, b, eps):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def visible_from_notation(text, n):
    """The [N, N] visibility of attnlens' mask notation, from mask.h's formula."""
    causal, window, dilation, sparse, tokens = False, None, 1, None, set()
    for part in filter(None, (p.strip() for p in text.split("+"))):
        kind, *args = part.split(":")
        if kind == "causal":
            causal = True
        elif kind in ("local", "window"):
            window = int(args[0])
        elif kind == "dilated":
            window, dilation = int(args[0]), int(args[1])
        elif kind == "strided":
            sparse = ("strided", int(args[0]), 1)
        elif kind == "fixed":
            sparse = ("fixed", int(args[0]), int(args[1]))
        elif kind == "tokens":
            tokens = {int(t) for t in args[0].split(",") if t}
        elif kind not in ("global", "full"):
            raise ValueError("unknown mask part " + part)
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(n):
            if causal and j > i:
                continue
            ok = True
            if window is not None:
                delta = j - i
                ok = delta % dilation == 0 and -window <= delta // dilation <= window
            if ok and sparse:
                kind, stride, summary = sparse
                if kind == "strided":
                    ok = abs(i - j) < stride or (i - j) % stride == 0
                else:
                    ok = i // stride == j // stride or j % stride >= stride - summary
            mask[i, j] = ok or i in tokens or j in tokens
    return mask


def ablated(context, layer, heads, extra):
    """The merged heads [N, heads * d] with the case's ablations of this layer applied."""
    d = context.shape[1] // heads
    context = context.clone()
    for at_layer, head, mode in extra["ablate"]:
        if at_layer != layer:
            continue
        part = context[:, head * d:(head + 1) * d]
        context[:, head * d:(head + 1) * d] = 0.0 if mode == "zero" else part.mean(0, keepdim=True)
    return context


def attend(q, k, v, heads, scale, visible, projections):
    """Multi-head attention over [N, hidden] projections; returns (context, weights [H, N, N]).
    Appends the layer's head-major q, k, v ([3, H, N, d]) to `projections`."""
    n, hidden = q.shape
    d = hidden // heads
    split = lambda t: t.view(n, heads, d).transpose(0, 1)  # [H, N, d]
    q, k, v = split(q), split(k), split(v)
    projections.append(torch.stack([q, k, v]))
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    scores = torch.where(visible, scores, torch.tensor(torch.finfo(scores.dtype).min,
                                                       dtype=scores.dtype))
    probs = torch.softmax(scores, dim=-1)
    context = torch.matmul(probs, v).transpose(0, 1).reshape(n, hidden)
    return context, probs


def gpt2(config, w, ids, masks, projections, extra):
    n, h, heads = len(ids), config["n_embd"], config["n_head"]
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    x = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(n)]
    extra["states"].append(x)
    attentions = []
    for layer in range(config["n_layer"]):
        p = f"h.{layer}."
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], config["layer_norm_epsilon"])
        qkv = a @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]  # Conv1D: x W + b
        q, k, v = qkv.split(h, dim=1)
        scale = 1.0
        if config.get("scale_attn_weights", True):
            scale /= math.sqrt(h // heads)
        if config.get("scale_attn_by_inverse_layer_idx", False):
            scale /= layer + 1
        visible = causal if masks is None else masks[layer]
        context, probs = attend(q, k, v, heads, scale, visible, projections)
        attentions.append(probs)
        context = ablated(context, layer, heads, extra)
        x = x + context @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], config["layer_norm_epsilon"])
        m = gelu_new(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        extra["states"].append(x)
    # ln_f, then the LM head tied to wte.
    extra["head"] = lambda x: layer_norm(x, w["ln_f.weight"], w["ln_f.bias"],
                                         config["layer_norm_epsilon"]) @ w["wte.weight"].T
    return attentions, extra["head"](x)


def expand_attention_types(types):
    layers = []
    for kinds, repeat in types:
        for _ in range(repeat):
            layers.extend(kinds)
    return layers


def gpt_neo(config, w, ids, masks, projections, extra):
    n, heads = len(ids), config["num_heads"]
    eps = config["layer_norm_epsilon"]
    x = w["wte.weight"][ids] + w["wpe.weight"][torch.arange(n)]
    extra["states"].append(x)
    attentions = []
    for layer, kind in enumerate(expand_attention_types(config["attention_types"])):
        p = f"h.{layer}."
        a = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        linear = lambda name: a @ w[p + f"attn.attention.{name}.weight"].T  # nn.Linear, no bias
        bias = torch.tril(torch.ones(n, n, dtype=torch.bool))
        if kind == "local":
            bias = bias ^ torch.tril(bias, -config["window_size"])
        visible = bias if masks is None else masks[layer]
        # GPT-Neo does not scale the attention logits.
        context, probs = attend(linear("q_proj"), linear("k_proj"), linear("v_proj"), heads, 1.0,
                                visible, projections)
        attentions.append(probs)
        context = ablated(context, layer, heads, extra)
        x = x + context @ w[p + "attn.attention.out_proj.weight"].T + w[
            p + "attn.attention.out_proj.bias"]
        m = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        m = gelu_new(m @ w[p + "mlp.c_fc.weight"].T + w[p + "mlp.c_fc.bias"])
        x = x + m @ w[p + "mlp.c_proj.weight"].T + w[p + "mlp.c_proj.bias"]
        extra["states"].append(x)
    extra["head"] = lambda x: layer_norm(x, w["ln_f.weight"], w["ln_f.bias"], eps) @ w[
        "wte.weight"].T
    return attentions, extra["head"](x)


def bert(config, w, ids, types, masks, projections, extra):
    n, h, heads = len(ids), config["hidden_size"], config["num_attention_heads"]
    eps = config["layer_norm_eps"]
    linear = lambda x, name: x @ w[name + ".weight"].T + w[name + ".bias"]
    norm = lambda x, name: layer_norm(x, w[name + ".weight"], w[name + ".bias"], eps)
    types = torch.tensor(types if types is not None else [0] * n)
    e = "embeddings."
    x = w[e + "word_embeddings.weight"][ids] + w[e + "token_type_embeddings.weight"][types]
    x = norm(x + w[e + "position_embeddings.weight"][torch.arange(n)], e + "LayerNorm")
    extra["states"].append(x)
    attentions = []
    for layer in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{layer}."
        q, k, v = (linear(x, p + "attention.self." + t) for t in ("query", "key", "value"))
        visible = torch.ones(n, n, dtype=torch.bool) if masks is None else masks[layer]
        context, probs = attend(q, k, v, heads, 1.0 / math.sqrt(h // heads), visible,
                                projections)
        attentions.append(probs)
        context = ablated(context, layer, heads, extra)
        x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
        m = gelu(linear(x, p + "intermediate.dense"))
        x = norm(linear(m, p + "output.dense") + x, p + "output.LayerNorm")
        extra["states"].append(x)
    if "cls.predictions.bias" not in w:
        return attentions, None

    def head(x):
        t = norm(gelu(linear(x, "cls.predictions.transform.dense")),
                 "cls.predictions.transform.LayerNorm")
        # The decoder is tied to the word embeddings, plus its own bias.
        return t @ w[e + "word_embeddings.weight"].T + w["cls.predictions.bias"]
    extra["head"] = head
    return attentions, head(x)


def rms_norm(x, w, eps):
    """LlamaRMSNorm: weight * (x * rsqrt(mean(x^2) + eps))."""
    return w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))


def rope_inverse_frequencies(config, d):
    """ROPE_INIT_FUNCTIONS: default, linear, dynamic (= default up to max_position_embeddings)
    and llama3, from rope_theta + rope_scaling or the newer rope_parameters."""
    scaling = config.get("rope_parameters") or config.get("rope_scaling") or {}
    base = (config.get("rope_parameters") or config).get("rope_theta", 10000.0)
    inv = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        inv = inv / scaling["factor"]
    elif kind == "llama3":
        factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        wavelen = 2 * math.pi / inv
        scaled = torch.where(wavelen > old / low, inv / factor, inv)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < old / high) * ~(wavelen > old / low)
        inv = torch.where(medium, smoothed, scaled)
    else:
        assert kind in ("default", "dynamic"), kind
    return inv


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def llama_layer_windows(config):
    """Each layer's sliding window (None: full causal), as Qwen2Config derives layer_types."""
    layers = config["num_hidden_layers"]
    if config["model_type"] != "qwen2" or not config.get("use_sliding_window", False):
        return [None] * layers
    types = config.get("layer_types") or [
        "sliding_attention" if i >= config.get("max_window_layers", 28) else "full_attention"
        for i in range(layers)]
    return [config["sliding_window"] if t == "sliding_attention" else None for t in types]


def llama(config, w, ids, masks, extra):
    """LlamaForCausalLM and Qwen2ForCausalLM (which has q/k/v biases, none on o_proj)."""
    n, h = len(ids), config["hidden_size"]
    heads = config["num_attention_heads"]
    kv = config.get("num_key_value_heads") or heads
    d = config.get("head_dim") or h // heads
    eps = config.get("rms_norm_eps", 1e-6)
    linear = lambda x, name: x @ w[name + ".weight"].T + (
        w[name + ".bias"] if name + ".bias" in w else 0)
    freqs = torch.outer(torch.arange(n, dtype=torch.float64), rope_inverse_frequencies(config, d))
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos(), emb.sin()  # [N, d]
    x = w["embed_tokens.weight"][ids]
    extra["states"].append(x)
    attentions = []
    for layer, window in enumerate(llama_layer_windows(config)):
        p = f"layers.{layer}."
        a = rms_norm(x, w[p + "input_layernorm.weight"], eps)
        q = linear(a, p + "self_attn.q_proj").view(n, heads, d).transpose(0, 1)
        k = linear(a, p + "self_attn.k_proj").view(n, kv, d).transpose(0, 1)
        v = linear(a, p + "self_attn.v_proj").view(n, kv, d).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        # repeat_kv: K/V head g serves query heads g * groups ... (g + 1) * groups - 1.
        k, v = k.repeat_interleave(heads // kv, dim=0), v.repeat_interleave(heads // kv, dim=0)
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(d)
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        visible = j <= i
        if window is not None:
            visible = visible & (j > i - window)
        if masks is not None:
            visible = masks[layer]
        scores = torch.where(visible, scores, torch.tensor(torch.finfo(scores.dtype).min,
                                                           dtype=scores.dtype))
        probs = torch.softmax(scores, dim=-1)
        attentions.append(probs)
        context = ablated((probs @ v).transpose(0, 1).reshape(n, heads * d), layer, heads, extra)
        x = x + linear(context, p + "self_attn.o_proj")
        m = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = linear(m, p + "mlp.gate_proj")
        x = x + linear(torch.nn.functional.silu(gate) * linear(m, p + "mlp.up_proj"),
                       p + "mlp.down_proj")
        extra["states"].append(x)
    tied = config.get("tie_word_embeddings", False)
    output = w["embed_tokens.weight"] if tied else w["lm_head.weight"]
    extra["head"] = lambda x: rms_norm(x, w["norm.weight"], eps) @ output.T
    return attentions, extra["head"](x)


def run_case(case):
    folder = case["folder"]
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    state = load_state(folder)
    ids = torch.tensor(case["ids"])
    kind = config["model_type"]
    layers = {"gpt2": "n_layer", "gpt_neo": "num_layers", "bert": "num_hidden_layers",
              "llama": "num_hidden_layers", "qwen2": "num_hidden_layers"}[kind]
    masks = None
    if case.get("masks") is not None:
        masks = [visible_from_notation(m, len(ids)) for m in case["masks"]]
        assert len(masks) == config[layers]
    projections = []  # per layer: [3, heads, N, head_dim]
    # What the passes share: the ablations, each hidden state, the head that reads them.
    extra = {"ablate": case.get("ablate") or [], "states": [], "head": None}
    if kind == "gpt2":
        attentions, logits = gpt2(config, weights(state, ["transformer."]), ids, masks,
                                  projections, extra)
    elif kind == "gpt_neo":
        attentions, logits = gpt_neo(config, weights(state, ["transformer."]), ids, masks,
                                     projections, extra)
    elif kind in ("llama", "qwen2"):
        # lm_head.weight keeps its name: "model." is the prefix of everything else.
        attentions, logits = llama(config, weights(state, ["model."]), ids, masks, extra)
    else:
        attentions, logits = bert(config, weights(state, ["bert."]), ids, case.get("types"), masks,
                                  projections, extra)
    attention = torch.stack(attentions)  # [layers, heads, N, N]
    layer = case.get("projections")
    lens = None
    if case.get("lens"):
        lens = torch.stack([extra["head"](x) for x in extra["states"]]).flatten().tolist()
    return {"attention": attention.flatten().tolist(),
            "logits": None if logits is None else logits.flatten().tolist(),
            "projections": None if layer is None else projections[layer].flatten().tolist(),
            "lens": lens}


def main():
    request = json.load(sys.stdin)
    json.dump({"cases": [run_case(case) for case in request["cases"]]}, sys.stdout)


if __name__ == "__main__":
    main()
