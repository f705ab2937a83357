"""A reference Marian forward pass and its decoding in plain torch, written from the semantics of
the transformers library's modeling_marian.py and its generation code (greedy and beam search),
independent of attnlens:

  - embeddings times sqrt(d_model) (scale_embedding), plus the static sinusoidal positions in
    Marian's layout: sin(pos / 10000^(2i/d)) in the first half of the columns, cos in the second;
  - post-norm layers (attention, residual, LayerNorm; feed-forward, residual, LayerNorm), no
    final layer norm on either stack, the activation SiLU ("swish"), LayerNorm eps 1e-5;
  - attention: queries times head_dim^-0.5, the decoder's self-attention causal, its
    cross-attention over every encoder position;
  - logits: the shared embeddings as the LM head, plus final_logits_bias;
  - decoding from decoder_start_token_id (the pad token); bad_words_ids (the pad token) never
    generated; forced_eos_token_id at the last position max_length allows.

Every decoder step here re-runs the whole prefix (no cache), so a cached implementation is
checked against the plain definition.

Cross-attention surgery (attnlens's crossMask, not a transformers feature), on every decoder
layer's cross-attention weights, written from its definition:
  - "full": the model as trained;
  - "last": every score but the last source token's is -inf (target tokens see only </s>);
  - "mean": every weight 1/m, whatever the scores (the output is the mean of the values);
  - "local:D": scores of source tokens j with |j - min(i, m - 1)| > D are -inf (Luong's local-m
    window around the monotonic position of target token i).
"""

import math

import torch


def sinusoidal_positions(count, dim):
    """MarianSinusoidalPositionalEmbedding's table: [count, dim]."""
    table = torch.zeros(count, dim, dtype=torch.float64)
    half = dim // 2 + dim % 2
    for pos in range(count):
        for j in range(dim):
            angle = pos / math.pow(10000, 2 * (j // 2) / dim)
            if j % 2 == 0:
                table[pos, j // 2] = math.sin(angle)
            else:
                table[pos, half + j // 2] = math.cos(angle)
    return table.float()


def cross_visible(cross_mask, n, m):
    """[n, m] bools: which source tokens each target row may see ("mean" sees all)."""
    rows = torch.arange(n)[:, None]
    cols = torch.arange(m)[None, :]
    if cross_mask == "last":
        return (cols == m - 1).expand(n, m)
    if cross_mask.startswith("local:"):
        radius = int(cross_mask.split(":")[1])
        return (cols - torch.clamp(rows, max=m - 1)).abs() <= radius
    return torch.ones(n, m, dtype=torch.bool)


class Marian:
    def __init__(self, cfg, state, cross_mask="full"):
        self.cfg = cfg
        self.cross_mask = cross_mask
        self.w = {k: v.double() for k, v in state.items()}
        d = cfg["d_model"]
        self.scale = math.sqrt(d) if cfg.get("scale_embedding") else 1.0
        self.positions = sinusoidal_positions(cfg["max_position_embeddings"], d).double()

    def _linear(self, name, x):
        return x @ self.w[name + ".weight"].T + self.w[name + ".bias"]

    def _norm(self, name, x):
        return torch.nn.functional.layer_norm(
            x, x.shape[-1:], self.w[name + ".weight"], self.w[name + ".bias"], 1e-5)

    def _attention(self, name, x, memory, heads, causal, cross=False):
        """(output [n, d], weights [heads, n, m]); `cross`: with self.cross_mask applied."""
        n, d = x.shape
        m = memory.shape[0]
        hd = d // heads
        q = (self._linear(name + ".q_proj", x) * hd ** -0.5).view(n, heads, hd).transpose(0, 1)
        k = self._linear(name + ".k_proj", memory).view(m, heads, hd).transpose(0, 1)
        v = self._linear(name + ".v_proj", memory).view(m, heads, hd).transpose(0, 1)
        scores = q @ k.transpose(1, 2)
        if causal:
            scores = scores.masked_fill(torch.ones(n, m).triu(1).bool(), float("-inf"))
        if cross:
            scores = scores.masked_fill(~cross_visible(self.cross_mask, n, m), float("-inf"))
        weights = scores.softmax(-1)
        if cross and self.cross_mask == "mean":
            weights = torch.full_like(weights, 1.0 / m)
        out = (weights @ v).transpose(0, 1).reshape(n, d)
        return self._linear(name + ".out_proj", out), weights

    def _feed_forward(self, prefix, x):
        hidden = torch.nn.functional.silu(self._linear(prefix + "fc1", x))
        return self._norm(prefix + "final_layer_norm", x + self._linear(prefix + "fc2", hidden))

    def _embed(self, part, ids):
        table = self.w[f"model.{part}.embed_tokens.weight"]
        return table[torch.tensor(ids)] * self.scale + self.positions[: len(ids)]

    def encode(self, ids):
        """(encoder output [n, d], self-attention [layers][heads, n, n])."""
        cfg = self.cfg
        if len(ids) > cfg["max_position_embeddings"]:
            raise ValueError("source longer than the positions")
        h = self._embed("encoder", ids)
        attentions = []
        for n in range(cfg["encoder_layers"]):
            p = f"model.encoder.layers.{n}."
            out, weights = self._attention(p + "self_attn", h, h,
                                           cfg["encoder_attention_heads"], causal=False)
            h = self._norm(p + "self_attn_layer_norm", h + out)
            h = self._feed_forward(p, h)
            attentions.append(weights)
        return h, attentions

    def decode(self, memory, ids):
        """Logits [t, vocab], self-attention and cross-attention [layers][heads, t, *]."""
        cfg = self.cfg
        h = self._embed("decoder", ids)
        selfs, crosses = [], []
        for n in range(cfg["decoder_layers"]):
            p = f"model.decoder.layers.{n}."
            heads = cfg["decoder_attention_heads"]
            out, self_w = self._attention(p + "self_attn", h, h, heads, causal=True)
            h = self._norm(p + "self_attn_layer_norm", h + out)
            out, cross_w = self._attention(p + "encoder_attn", h, memory, heads, causal=False,
                                           cross=True)
            h = self._norm(p + "encoder_attn_layer_norm", h + out)
            h = self._feed_forward(p, h)
            selfs.append(self_w)
            crosses.append(cross_w)
        logits = h @ self.w["lm_head.weight"].T + self.w["final_logits_bias"][0]
        return logits, selfs, crosses

    def _process(self, scores, cur_len, max_length):
        """The logits processors Marian's config asks for: bad words (the pad token) and the
        forced EOS at the last step."""
        scores = scores.clone()
        for words in self.cfg.get("bad_words_ids") or []:
            if len(words) == 1:
                scores[..., words[0]] = float("-inf")
        forced = self.cfg.get("forced_eos_token_id")
        if forced is not None and cur_len == max_length - 1:
            keep = scores[..., forced].clone()
            scores[...] = float("-inf")
            scores[..., forced] = keep
        return scores

    def greedy(self, memory, max_length):
        """Greedy decoding: (sequence from the start token, per step: logits, self row, cross
        row). The sequence ends at EOS or max_length (start token included)."""
        ids = [self.cfg["decoder_start_token_id"]]
        steps = []
        while len(ids) < max_length:
            logits, selfs, crosses = self.decode(memory, ids)
            last = logits[-1]
            steps.append({
                "logits": last.tolist(),
                "selfAttention": [w[:, -1, :].tolist() for w in selfs],
                "crossAttention": [w[:, -1, :].tolist() for w in crosses],
            })
            token = int(self._process(last, len(ids), max_length).argmax())
            ids.append(token)
            if token == self.cfg["eos_token_id"]:
                break
        return ids, steps

    def beam_search(self, memory, num_beams, max_length, length_penalty=1.0,
                    early_stopping=False):
        """The library's beam search for one source: (best sequence, its score)."""
        eos = self.cfg["eos_token_id"]
        beams = [[self.cfg["decoder_start_token_id"]] for _ in range(num_beams)]
        beam_scores = torch.tensor([0.0] + [-1e9] * (num_beams - 1), dtype=torch.float64)
        hyps = Hypotheses(num_beams, length_penalty, early_stopping)
        done = False
        cur_len = 1
        while cur_len < max_length:
            logprobs = torch.stack([
                self.decode(memory, beam)[0][-1].log_softmax(-1) for beam in beams])
            scores = self._process(logprobs, cur_len, max_length) + beam_scores[:, None]
            vocab = scores.shape[1]
            top, index = scores.view(-1).topk(2 * num_beams)
            next_beams, next_scores = [], []
            for rank, (score, flat) in enumerate(zip(top.tolist(), index.tolist())):
                beam, token = flat // vocab, flat % vocab
                if token == eos:
                    if rank < num_beams:
                        hyps.add(beams[beam], score)
                else:
                    next_beams.append(beams[beam] + [token])
                    next_scores.append(score)
                if len(next_beams) == num_beams:
                    break
            done = done or hyps.is_done(top.max().item(), cur_len)
            beams = next_beams
            beam_scores = torch.tensor(next_scores, dtype=torch.float64)
            cur_len += 1
            if done:
                break
        if not done:
            for beam, score in zip(beams, beam_scores.tolist()):
                hyps.add(beam, score)
        score, best = max(hyps.beams, key=lambda b: b[0])
        if len(best) < max_length:
            best = best + [eos]
        return best, score


class Hypotheses:
    """BeamHypotheses: the n best finished sequences, scored sum_logprobs / len^length_penalty
    (len counting the start token, not EOS)."""

    def __init__(self, num_beams, length_penalty, early_stopping):
        self.num_beams, self.length_penalty = num_beams, length_penalty
        self.early_stopping = early_stopping
        self.beams, self.worst = [], 1e9

    def add(self, sequence, sum_logprobs):
        score = sum_logprobs / (len(sequence) ** self.length_penalty)
        if len(self.beams) < self.num_beams or score > self.worst:
            self.beams.append((score, list(sequence)))
            if len(self.beams) > self.num_beams:
                ranked = sorted((s, i) for i, (s, _) in enumerate(self.beams))
                del self.beams[ranked[0][1]]
                self.worst = ranked[1][0]
            else:
                self.worst = min(score, self.worst)

    def is_done(self, best_sum_logprobs, cur_len):
        if len(self.beams) < self.num_beams:
            return False
        if self.early_stopping:
            return True
        return self.worst >= best_sum_logprobs / cur_len ** self.length_penalty


def step_rows(model, memory, sequence):
    """The self and cross rows of each step that chose a token of `sequence` after the start:
    one decode of the whole sequence (the decoder is causal, so row i is what step i saw)."""
    _, selfs, crosses = model.decode(memory, sequence)
    return [{"selfAttention": [w[:, i, : i + 1].tolist() for w in selfs],
             "crossAttention": [w[:, i, :].tolist() for w in crosses]}
            for i in range(len(sequence) - 1)]


def describe_translation(model, ids, max_new_tokens, num_beams):
    """Everything the tests compare for one source."""
    memory, encoder_attention = model.encode(ids)
    max_length = max_new_tokens + 1
    greedy, steps = model.greedy(memory, max_length)
    beam, beam_score = model.beam_search(memory, num_beams, max_length)
    return {
        "inputIds": ids,
        "encoderAttention": [w.tolist() for w in encoder_attention],
        "greedy": greedy,
        "steps": steps,
        "beam": beam,
        "beamScore": beam_score,
        "beamSteps": step_rows(model, memory, beam),
    }


def describe_masked(cfg, state, ids, max_new_tokens, num_beams, cross_mask):
    """Greedy steps and the beam under a cross mask (the encoder is unchanged by it)."""
    model = Marian(cfg, state, cross_mask)
    memory, _ = model.encode(ids)
    greedy, steps = model.greedy(memory, max_new_tokens + 1)
    beam, beam_score = model.beam_search(memory, num_beams, max_new_tokens + 1)
    return {"greedy": greedy, "steps": steps, "beam": beam, "beamScore": beam_score,
            "beamSteps": step_rows(model, memory, beam)}
