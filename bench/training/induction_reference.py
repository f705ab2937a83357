#!/usr/bin/env python3
"""An independent PyTorch copy of the induction experiment (bench/training/induction-sweep.mjs).

The same 2-layer attention-only GPT as attnlens/train (pre-LN, learned absolute positions, causal
attention scaled by 1/sqrt(head_dim), the LM head tied to the token embedding, GPT-2's
initialisation), trained with AdamW and gradient clipping at 1 on the same kinds of rows, and
measured the same way: each layer-2 head's weight on the token after the previous occurrence of
the current token, on 8 held-out probes (16 random tokens repeated once), and the best layer-1
previous-token weight. It answers one question: does another implementation of the same setup
grow an induction head where attnlens' trainer does not? Numbers are printed, never asserted.

    /usr/bin/python3 bench/training/induction_reference.py [corpus=offset|mixed] [steps=6000]
        [every=1000] [vocab=64] [context=32] [width=64] [heads=4] [batch=16] [lr=3e-3]
        [min_length=6] [max_length=16] [seed=1]

corpus offset: one random sequence of a random length in [min_length, max_length] repeated right
after itself at a random place among random tokens (repeatedRandomSequences()); mixed: half of the
rows those, half random tokens where x[i] = (7 x[i-2] + 3) mod vocab three times in four (a pattern
that rewards a previous-token head on its own).
"""
import math
import sys
import time

import torch

SETTINGS = dict(corpus='offset', steps=6000, every=1000, vocab=64, context=32, width=64, heads=4,
                batch=16, lr=3e-3, min_length=6, max_length=16, seed=1)
for argument in sys.argv[1:]:
    key, value = argument.split('=')
    if key not in SETTINGS:
        sys.exit(f'unknown setting {key} (known: {", ".join(SETTINGS)})')
    SETTINGS[key] = value if key == 'corpus' else type(SETTINGS[key])(float(value))
S = SETTINGS
LAYERS = 2
torch.set_num_threads(1)
torch.manual_seed(S['seed'])


class AttentionOnlyGpt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        v, t, w = S['vocab'], S['context'], S['width']
        self.token = torch.nn.Parameter(torch.randn(v, w) * 0.02)
        self.position = torch.nn.Parameter(torch.randn(t, w) * 0.02)
        self.norms = torch.nn.ModuleList(torch.nn.LayerNorm(w) for _ in range(LAYERS))
        self.qkv = torch.nn.ModuleList(torch.nn.Linear(w, 3 * w) for _ in range(LAYERS))
        self.out = torch.nn.ModuleList(torch.nn.Linear(w, w) for _ in range(LAYERS))
        self.final_norm = torch.nn.LayerNorm(w)
        for linear in self.qkv:
            torch.nn.init.normal_(linear.weight, 0, 0.02)
            torch.nn.init.zeros_(linear.bias)
        for linear in self.out:
            torch.nn.init.normal_(linear.weight, 0, 0.02 / math.sqrt(2 * LAYERS))
            torch.nn.init.zeros_(linear.bias)

    def forward(self, ids):
        b, t = ids.shape
        h, d = S['heads'], S['width'] // S['heads']
        x = self.token[ids] + self.position[:t]
        visible = torch.ones(t, t).tril().bool()
        weights = []
        for layer in range(LAYERS):
            q, k, v = self.qkv[layer](self.norms[layer](x)).split(S['width'], -1)
            q, k, v = (m.view(b, t, h, d).transpose(1, 2) for m in (q, k, v))
            p = ((q @ k.transpose(-1, -2)) / math.sqrt(d)).masked_fill(~visible, -1e9).softmax(-1)
            weights.append(p)
            x = x + self.out[layer]((p @ v).transpose(1, 2).reshape(b, t, S['width']))
        return self.final_norm(x) @ self.token.T, weights


rows = torch.Generator().manual_seed(S['seed'] + 1)


def draw(n):
    return int(torch.randint(0, n, (1,), generator=rows))


def batch():
    v, n = S['vocab'], S['context'] + 1
    ids = torch.randint(0, v, (S['batch'], n), generator=rows)
    for r in range(S['batch']):
        if S['corpus'] == 'mixed' and r % 2 == 1:
            for i in range(2, n):
                if draw(4) != 0:
                    ids[r, i] = (ids[r, i - 2] * 7 + 3) % v
            continue
        length = S['min_length'] + draw(S['max_length'] - S['min_length'] + 1)
        start = draw(n - 2 * length + 1)
        ids[r, start + length:start + 2 * length] = ids[r, start:start + length]
    return ids


half = torch.randint(0, S['vocab'], (8, S['context'] // 2), generator=torch.Generator().manual_seed(999))
probes = torch.cat([half, half], 1)


def scores(model):
    n = S['context']
    with torch.no_grad():
        _, (first, second) = model(probes)
    induction = [float(torch.stack([second[:, h, i, i - n // 2 + 1] for i in range(n // 2, n)]).mean())
                 for h in range(S['heads'])]
    previous = [float(torch.stack([first[:, h, i, i - 1] for i in range(1, n)]).mean())
                for h in range(S['heads'])]
    return induction, max(previous)


model = AttentionOnlyGpt()
optimiser = torch.optim.AdamW(model.parameters(), lr=S['lr'], betas=(0.9, 0.95), weight_decay=0)
print(S)
started = time.time()
for step in range(1, S['steps'] + 1):
    ids = batch()
    logits, _ = model(ids[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, S['vocab']), ids[:, 1:].reshape(-1))
    optimiser.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimiser.step()
    if step % S['every'] == 0:
        induction, previous = scores(model)
        print(f'step {step}, {time.time() - started:.1f} s, loss {loss.item():.3f}, layer-2 '
              f'induction {" ".join(f"{x:.2f}" for x in induction)}, best layer-1 previous-token '
              f'{previous:.2f}', flush=True)
