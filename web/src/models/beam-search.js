// Beam search as the transformers library's generate() runs it for one source (BeamSearchScorer,
// BeamHypotheses): `beams` running sequences, the first scored 0 and the rest -1e9 so the first
// step expands one; each step adds every beam's log-softmax (after the logits processors) to its
// score and takes the best 2 * beams candidates in order: an EOS among the first `beams` ends a
// hypothesis (scored sum / length^length_penalty, the length counting the start token and not
// EOS), other tokens continue until `beams` are kept. Done when `beams` hypotheses are finished
// and none running can beat the worst (early_stopping false) or at once (true); at max_length the
// running beams are finished as they are. The best hypothesis gets EOS appended when shorter
// than max_length.

/**
 * @param decoder translate.js's decoder (run, process, turn, generation, maxLength, vocab)
 * @param {{ beams: number }} opts
 * @returns {Promise<{ ids: number[], score: number }>}
 */
export async function beamSearch(decoder, { beams }) {
  const { generation, maxLength, vocab } = decoder;
  const eos = generation.eosTokenId;
  let running = Array.from({ length: beams }, () => [generation.decoderStartTokenId]);
  let scores = running.map((_, b) => (b === 0 ? 0 : -1e9));
  const finished = new Hypotheses(beams, generation.lengthPenalty, generation.earlyStopping);
  let done = false;
  for (let length = 1; length < maxLength && !done; length++) {
    await decoder.turn();
    const candidates = [];
    running.forEach((ids, b) => {
      const logits = decoder.run(ids, [ids.length - 1], false).logits;
      const next = decoder.process(logSoftmax(logits), ids);
      for (let v = 0; v < vocab; v++) candidates.push({ score: next[v] + scores[b], beam: b, v });
    });
    // Ties keep the flat index order (beam, then token), as torch.topk over [beams * vocab].
    candidates.sort((a, c) => c.score - a.score || a.beam - c.beam || a.v - c.v);
    const top = candidates.slice(0, 2 * beams);
    const nextRunning = [];
    const nextScores = [];
    for (const [rank, { score, beam, v }] of top.entries()) {
      if (v === eos) {
        if (rank < beams) finished.add(running[beam], score);
      } else {
        nextRunning.push([...running[beam], v]);
        nextScores.push(score);
      }
      if (nextRunning.length === beams) break;
    }
    done = finished.isDone(top[0].score, length);
    running = nextRunning;
    scores = nextScores;
  }
  if (!done) running.forEach((ids, b) => finished.add(ids, scores[b]));
  const best = finished.best();
  const ids = best.ids.length < maxLength ? [...best.ids, eos] : best.ids;
  return { ids, score: best.score };
}

function logSoftmax(logits) {
  let max = -Infinity;
  for (const x of logits) max = Math.max(max, x);
  let sum = 0;
  for (const x of logits) sum += Math.exp(x - max);
  const log = max + Math.log(sum);
  return Float64Array.from(logits, (x) => x - log);
}

class Hypotheses {
  constructor(beams, lengthPenalty, earlyStopping) {
    this.beams = beams;
    this.lengthPenalty = lengthPenalty;
    this.earlyStopping = earlyStopping;
    this.list = [];
    this.worst = 1e9;
  }

  add(ids, sumLogprobs) {
    const score = sumLogprobs / ids.length ** this.lengthPenalty;
    if (this.list.length < this.beams || score > this.worst) {
      this.list.push({ score, ids: [...ids] });
      if (this.list.length > this.beams) {
        const ranked = this.list
          .map((h, i) => [h.score, i])
          .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
        this.list.splice(ranked[0][1], 1);
        this.worst = ranked[1][0];
      } else {
        this.worst = Math.min(score, this.worst);
      }
    }
  }

  isDone(bestSumLogprobs, length) {
    if (this.list.length < this.beams) return false;
    if (this.earlyStopping) return true;
    return this.worst >= bestSumLogprobs / length ** this.lengthPenalty;
  }

  best() {
    return this.list.reduce((a, h) => (h.score > a.score ? h : a));
  }
}
