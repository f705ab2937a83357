// "Things to try": each card applies a patch to the state that puts one idea from the primer on
// screen. `queryText` focuses the first query token with that text once the result is in.
import { EXAMPLES } from './examples.js';

export const IDEAS = [
  {
    title: 'ideaPronounTitle',
    text: 'ideaPronounText',
    patch: {
      mode: 'self',
      text: EXAMPLES[0].text,
      granularity: 'word',
      view: 'matrix',
      compare: '',
      queryText: 'it',
    },
  },
  {
    title: 'ideaScaleTitle',
    text: 'ideaScaleText',
    patch: { score: 'dot', view: 'matrix', temperature: 1 },
  },
  { title: 'ideaTempTitle', text: 'ideaTempText', patch: { temperature: 0.2, view: 'matrix' } },
  {
    title: 'ideaCausalTitle',
    text: 'ideaCausalText',
    patch: { mask: 'causal', compare: '', view: 'matrix' },
  },
  {
    title: 'ideaLocalTitle',
    text: 'ideaLocalText',
    patch: { mask: 'local:2', compare: 'global', view: 'matrix' },
  },
  {
    title: 'ideaSparseTitle',
    text: 'ideaSparseText',
    patch: {
      mode: 'self',
      text: EXAMPLES[2].text,
      granularity: 'char',
      mask: 'strided:4+tokens:0',
      compare: '',
      view: 'matrix',
    },
  },
  {
    title: 'ideaCrossTitle',
    text: 'ideaCrossText',
    patch: {
      mode: 'cross',
      text: EXAMPLES[3].text,
      source: EXAMPLES[3].source,
      granularity: 'word',
      mask: 'global',
      compare: '',
      view: 'matrix',
    },
  },
  { title: 'ideaHeadsTitle', text: 'ideaHeadsText', patch: { heads: 8, view: 'heads' } },
];
