// "Things to try": each card puts one idea from the primer on screen. A card starts from the
// default settings (the reader's language and colours kept, see resetState) and applies its
// patch, so it shows the same thing whichever card or example came before. `queryText` focuses
// the first query token with that text once the result is in. Cards about what a trained model
// would do (`real`) also open one: the model, text and view they show there.
import { EXAMPLES } from './examples.js';

export const IDEAS = [
  {
    title: 'ideaPronounTitle',
    text: 'ideaPronounText',
    // Head 4 is where "it" gives "animal" most, and where every other query does too.
    patch: { text: EXAMPLES[0].text, head: 3, queryText: 'it' },
    // A trained model: where "it" looks in every layer and head (token focus).
    realText: 'ideaPronounReal',
    real: { model: 'distilgpt2', text: EXAMPLES[0].text, view: 'focus', queryText: 'it' },
  },
  {
    title: 'ideaScaleTitle',
    text: 'ideaScaleText',
    patch: { text: EXAMPLES[0].text, score: 'dot', dk: 64 },
  },
  { title: 'ideaTempTitle', text: 'ideaTempText', patch: { temperature: 0.2 } },
  { title: 'ideaCausalTitle', text: 'ideaCausalText', patch: { mask: 'causal' } },
  {
    title: 'ideaLocalTitle',
    text: 'ideaLocalText',
    patch: { mask: 'local:2', compare: 'global' },
  },
  {
    title: 'ideaSparseTitle',
    text: 'ideaSparseText',
    patch: { text: EXAMPLES[2].text, granularity: 'char', mask: 'strided:4+tokens:0' },
  },
  {
    title: 'ideaCrossTitle',
    text: 'ideaCrossText',
    patch: { mode: 'cross', text: EXAMPLES[3].text, source: EXAMPLES[3].source },
    // A multilingual BERT reads both sentences as one pair: the block between them.
    realText: 'ideaCrossReal',
    real: {
      model: 'bert-base-multilingual-cased',
      text: EXAMPLES[3].source,
      pair: EXAMPLES[3].text,
      block: true,
      view: 'matrix',
    },
  },
  { title: 'ideaHeadsTitle', text: 'ideaHeadsText', patch: { heads: 8, view: 'heads' } },
];
