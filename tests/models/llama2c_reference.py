#!/usr/bin/env python3
"""An independent reference of llama2.c's semantics (karpathy/llama2.c, run.c), written from
run.c's definition in plain torch ops (float64), not from attnlens' code: its file formats
(version 0, 1 and 2 checkpoints; tok*.bin tokenizers), its encode() and its forward pass
(RMSNorm eps 1e-5, RoPE on interleaved pairs (2i, 2i+1) of each head, grouped-query attention,
the SiLU-gated MLP, the shared or stored classifier).

Reads one JSON request on stdin, writes one JSON answer on stdout:

  request  {"model": path, "tokenizer": path, "texts": [...], "ids": [[...]], "encode": [...],
            "greedy": steps, "greedy_from": [ids] (default [1], BOS alone),
            "write": null | {"version": 1 | 2, "path": ..., "group_size": 64}}
  answer   {"cases": [{"ids": [...], "attention": [layers * heads * N * N],
                       "logits": [N * vocab]}],   (one per text, then one per list of "ids")
            "encoded": [[ids of each "encode" text]],
            "greedy": {"ids": [...], "text": "..."}}   (ids: greedy_from, then the steps; each
                                                      step re-runs the whole sequence)

`write` re-exports the model it read as a version 1 or 2 file, as llama2.c's export.py lays them
out (version 2: int8 groups with float32 scales), so the loader's other versions can be checked
against the same reference.
"""

import json
import struct
import sys

import numpy as np
import torch

MAGIC = 0x616B3432


def read_checkpoint(path):
    data = open(path, "rb").read()
    if struct.unpack_from("<I", data, 0)[0] == MAGIC:
        version = struct.unpack_from("<i", data, 4)[0]
        dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", data, 8)
        shared = data[36] == 1
        group = struct.unpack_from("<i", data, 37)[0] if version == 2 else 0
        offset = 256
    else:
        version, group, offset = 0, 0, 28
        dim, hidden, layers, heads, kv_heads, vocab, seq_len = struct.unpack_from("<7i", data, 0)
        shared = vocab > 0
        vocab = abs(vocab)
    head_size = dim // heads
    kv_dim = kv_heads * head_size
    p = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, vocab=vocab,
             seq_len=seq_len, shared=shared, head_size=head_size)

    def take_f32(count, shape):
        nonlocal offset
        array = np.frombuffer(data, dtype="<f4", count=count, offset=offset)
        offset += 4 * count
        return torch.from_numpy(array.astype(np.float64).reshape(shape))

    def stacked(shape):
        return [take_f32(int(np.prod(shape)), shape) for _ in range(layers)]

    w = {}
    if version == 0:
        w["emb"] = take_f32(vocab * dim, (vocab, dim))
        w["att_norm"] = stacked((dim,))
        w["wq"], w["wk"] = stacked((dim, dim)), stacked((kv_dim, dim))
        w["wv"], w["wo"] = stacked((kv_dim, dim)), stacked((dim, dim))
        w["ffn_norm"] = stacked((dim,))
        w["w1"], w["w2"], w["w3"] = stacked((hidden, dim)), stacked((dim, hidden)), stacked((hidden, dim))
        w["norm"] = take_f32(dim, (dim,))
        take_f32(seq_len * head_size // 2, (-1,))  # freq_cis_real, unused
        take_f32(seq_len * head_size // 2, (-1,))  # freq_cis_imag, unused
        w["cls"] = w["emb"] if shared else take_f32(vocab * dim, (vocab, dim))
    else:
        w["att_norm"] = stacked((dim,))
        w["ffn_norm"] = stacked((dim,))
        w["norm"] = take_f32(dim, (dim,))
        names = [("emb", (vocab, dim))]
        names += [(f"wq{l}", (dim, dim)) for l in range(layers)]
        names += [(f"wk{l}", (kv_dim, dim)) for l in range(layers)]
        names += [(f"wv{l}", (kv_dim, dim)) for l in range(layers)]
        names += [(f"wo{l}", (dim, dim)) for l in range(layers)]
        names += [(f"w1{l}", (hidden, dim)) for l in range(layers)]
        names += [(f"w2{l}", (dim, hidden)) for l in range(layers)]
        names += [(f"w3{l}", (hidden, dim)) for l in range(layers)]
        if not shared:
            names.append(("cls", (vocab, dim)))
        flat = {}
        if version == 1:
            for name, shape in names:
                flat[name] = take_f32(int(np.prod(shape)), shape)
        else:
            quants = []
            for name, shape in names:
                count = int(np.prod(shape))
                quants.append(np.frombuffer(data, dtype=np.int8, count=count, offset=offset))
                offset += count
            for (name, shape), q in zip(names, quants):
                scales = take_f32(q.size // group, (-1, 1))
                values = torch.from_numpy(q.astype(np.float64).reshape(-1, group)) * scales
                flat[name] = values.reshape(shape)
        w["emb"] = flat["emb"]
        for key in ["wq", "wk", "wv", "wo", "w1", "w2", "w3"]:
            w[key] = [flat[f"{key}{l}"] for l in range(layers)]
        w["cls"] = w["emb"] if shared else flat["cls"]
    assert offset == len(data), (offset, len(data))
    return p, w


def write_checkpoint(p, w, path, version, group_size=64):
    """llama2.c's export.py layouts for version 1 and 2, from weights read above (float32)."""
    f32 = lambda t: t.to(torch.float32).numpy().astype("<f4").tobytes()
    layers = p["layers"]
    header = struct.pack("<Ii", MAGIC, version)
    header += struct.pack("<7i", p["dim"], p["hidden"], layers, p["heads"], p["kv_heads"],
                          p["vocab"], p["seq_len"])
    header += struct.pack("B", 1 if p["shared"] else 0)
    if version == 2:
        header += struct.pack("<i", group_size)
    out = [header + b"\0" * (256 - len(header))]
    norms = [*w["att_norm"], *w["ffn_norm"], w["norm"]]
    weights = [w["emb"]] + [t for key in ["wq", "wk", "wv", "wo", "w1", "w2", "w3"] for t in w[key]]
    if not p["shared"]:
        weights.append(w["cls"])
    if version == 1:
        out += [f32(t) for t in norms + weights]
    else:
        out += [f32(t) for t in norms]
        scales = []
        for t in weights:
            groups = t.to(torch.float32).reshape(-1, group_size)
            scale = groups.abs().max(dim=1).values / 127.0
            q = torch.round(groups / scale[:, None]).to(torch.int8)
            out.append(q.numpy().tobytes())
            scales.append(scale)
        out += [f32(s) for s in scales]
    open(path, "wb").write(b"".join(out))


def read_tokenizer(path, vocab):
    data = open(path, "rb").read()
    offset = 4
    pieces, scores = [], []
    for _ in range(vocab):
        score, length = struct.unpack_from("<fi", data, offset)
        offset += 8
        pieces.append(data[offset:offset + length])
        scores.append(score)
        offset += length
    return pieces, scores


def encode(text, pieces, scores):
    """run.c's encode(text, bos=1, eos=0)."""
    lookup = {piece: i for i, piece in enumerate(pieces)}
    ids = [1]
    if text:
        ids.append(lookup[b" "])  # the dummy prefix
    raw = text.encode("utf-8")
    i = 0
    while i < len(raw):
        # one UTF-8 character: a lead byte and its continuation bytes (at most 4 in all)
        j = i + 1
        while j < len(raw) and (raw[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        char = raw[i:j]
        if char in lookup:
            ids.append(lookup[char])
        else:
            ids.extend(b + 3 for b in char)  # byte fallback: <0x00> is id 3
        i = j
    while True:
        best, best_id, best_at = -1e10, -1, -1
        for k in range(len(ids) - 1):
            merged = lookup.get(pieces[ids[k]] + pieces[ids[k + 1]])
            if merged is not None and scores[merged] > best:
                best, best_id, best_at = scores[merged], merged, k
        if best_at == -1:
            break
        ids[best_at:best_at + 2] = [best_id]
    return ids


def decode_piece(previous, token, pieces):
    """run.c's decode(): the space after BOS is dropped, <0xNN> is one byte."""
    piece = pieces[token]
    if previous == 1 and piece.startswith(b" "):
        piece = piece[1:]
    if piece.startswith(b"<0x") and len(piece) == 6 and piece.endswith(b">"):
        return bytes([int(piece[3:5], 16)])
    return piece


def rmsnorm(x, weight):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5) * weight


def rope(x, head_size):
    """x [N, heads, head_size]: each pair (2i, 2i+1) rotated by pos * 10000^(-2i / head_size)."""
    n = x.shape[0]
    i = torch.arange(0, head_size, 2, dtype=torch.float64)
    freq = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64), i / head_size)
    angle = torch.arange(n, dtype=torch.float64)[:, None] * freq[None, :]
    cos, sin = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    even, odd = x[..., 0::2], x[..., 1::2]
    out = torch.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def forward(p, w, ids):
    n, hs, heads, kv_heads = len(ids), p["head_size"], p["heads"], p["kv_heads"]
    x = w["emb"][ids]
    attention = []
    causal = torch.tril(torch.ones(n, n, dtype=torch.bool))
    for l in range(p["layers"]):
        h = rmsnorm(x, w["att_norm"][l])
        q = rope((h @ w["wq"][l].T).reshape(n, heads, hs), hs)
        k = rope((h @ w["wk"][l].T).reshape(n, kv_heads, hs), hs)
        v = (h @ w["wv"][l].T).reshape(n, kv_heads, hs)
        group = heads // kv_heads
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q, k) / (hs ** 0.5)
        scores = scores.masked_fill(~causal, float("-inf"))
        att = torch.softmax(scores, dim=-1)
        attention.append(att)
        out = torch.einsum("hqk,khd->qhd", att, v).reshape(n, heads * hs)
        x = x + out @ w["wo"][l].T
        h = rmsnorm(x, w["ffn_norm"][l])
        gate = h @ w["w1"][l].T
        x = x + (torch.nn.functional.silu(gate) * (h @ w["w3"][l].T)) @ w["w2"][l].T
    logits = rmsnorm(x, w["norm"]) @ w["cls"].T
    return torch.stack(attention), logits


def main():
    request = json.load(sys.stdin)
    p, w = read_checkpoint(request["model"])
    if request.get("write"):
        spec = request["write"]
        write_checkpoint(p, w, spec["path"], spec["version"], spec.get("group_size", 64))
        if spec["version"] == 2:  # the reference then runs what the file stands for
            p, w = read_checkpoint(spec["path"])
    pieces, scores = read_tokenizer(request["tokenizer"], p["vocab"])
    cases = []
    texts = [encode(text, pieces, scores) for text in request.get("texts", [])]
    for ids in texts + request.get("ids", []):
        attention, logits = forward(p, w, ids)
        cases.append({"ids": ids, "attention": attention.flatten().tolist(),
                      "logits": logits.flatten().tolist()})
    answer = {"cases": cases,
              "encoded": [encode(text, pieces, scores) for text in request.get("encode", [])]}
    steps = request.get("greedy", 0)
    if steps:
        ids = list(request.get("greedy_from", [1]))
        for _ in range(steps):
            _, logits = forward(p, w, ids)
            ids.append(int(torch.argmax(logits[-1])))
        start = len(request.get("greedy_from", [1]))
        text = b"".join(decode_piece(ids[i - 1], ids[i], pieces) for i in range(start, len(ids)))
        answer["greedy"] = {"ids": ids, "text": text.decode("utf-8", errors="replace")}
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
