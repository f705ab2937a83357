// Beam search as the transformers library's generate() runs it for one source (BeamSearchScorer,
// BeamHypotheses): `beams` running sequences, the first scored 0 and the rest -1e9 so the first
// step expands one; each step adds every beam's log-softmax (after the logits processors) to its
// score and takes the best 2 * beams candidates in order: an EOS among the first `beams` ends a
// hypothesis (scored sum / length^length_penalty, the length counting the start token and not
// EOS), other tokens continue until `beams` are kept. Done when `beams` hypotheses are finished
// and none running can beat the worst (early_stopping false) or at once (true); at max_length the
// running beams are finished as they are. The best hypothesis gets EOS appended when shorter
// than max_length.
//
// Each running beam has its own KV cache (translate-decoder.js): a step runs every beam's newest
// token against its cache, and the survivors' caches are reordered to follow their parents. The
// first step runs the start token once and copies that cache to every beam (they all hold the
// same start token). Each beam carries the rows of the steps that chose its tokens.

/**
 * @param decoder translate-decoder.js's decoder (step, reorder, process, generation, maxLength,
 *   vocab)
 * @param {{ beams: number, turn: () => Promise<void> }} opts turn: awaited before each step
 *   (throws when cancelled)
 * @returns {Promise<{ ids: number[], steps: object[], score: number }>}
 */
export async function beamSearch(decoder, { beams, turn }) {
  const { generation, maxLength, vocab } = decoder;
  const eos = generation.eosTokenId;
  let running = Array.from({ length: beams }, () => [generation.decoderStartTokenId]);
  let runningSteps = running.map(() => []);
  let scores = running.map((_, b) => (b === 0 ? 0 : -1e9));
  const finished = new Hypotheses(beams, generation.lengthPenalty, generation.earlyStopping);
  let done = false;
  for (let length = 1; length < maxLength && !done; length++) {
    await turn();
    const top = [];
    let first = null;
    const stepped = running.map((ids, b) => {
      if (length > 1) return decoder.step(b, ids);
      if (b === 0) {
        first = decoder.step(0, ids);
        decoder.reorder(running.map(() => 0));
      }
      return first;
    });
    running.forEach((ids, b) => {
      const next = decoder.process(logSoftmax(stepped[b].logits), ids);
      for (let v = 0; v < vocab; v++) keepBest(top, 2 * beams, next[v] + scores[b], b, v);
    });
    const nextRunning = [];
    const nextSteps = [];
    const nextScores = [];
    const parents = [];
    for (const [rank, { score, beam, v }] of top.entries()) {
      const steps = [...runningSteps[beam], stepped[beam]];
      if (v === eos) {
        if (rank < beams) finished.add(running[beam], steps, score);
      } else {
        nextRunning.push([...running[beam], v]);
        nextSteps.push(steps);
        nextScores.push(score);
        parents.push(beam);
      }
      if (nextRunning.length === beams) break;
    }
    done = finished.isDone(top[0].score, length);
    running = nextRunning;
    runningSteps = nextSteps;
    scores = nextScores;
    if (!done && length + 1 < maxLength) decoder.reorder(parents);
  }
  if (!done) running.forEach((ids, b) => finished.add(ids, runningSteps[b], scores[b]));
  const best = finished.best();
  const ids = best.ids.length < maxLength ? [...best.ids, eos] : best.ids;
  return { ids, steps: best.steps, score: best.score };
}

// Puts the candidate into `top` (best first, at most `size` long) when it ranks there: the best
// 2 * beams of beams * vocab scores without sorting them all. Candidates come in flat index
// order (beam, then token), so a tie keeps the earlier one first, as torch.topk does.
function keepBest(top, size, score, beam, v) {
  if (top.length === size && !(score > top[size - 1].score)) return;
  let i = Math.min(top.length, size - 1);
  for (; i > 0 && top[i - 1].score < score; i--) top[i] = top[i - 1];
  top[i] = { score, beam, v };
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

  // `steps`: the rows of each step that chose a token after the start (one more than ids has
  // when EOS ended the hypothesis: that step chose the EOS appended at the end).
  add(ids, steps, sumLogprobs) {
    const score = sumLogprobs / ids.length ** this.lengthPenalty;
    if (this.list.length < this.beams || score > this.worst) {
      this.list.push({ score, ids: [...ids], steps });
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
