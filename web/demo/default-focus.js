// The query the demo explains before the reader picks one, so the first view already explains
// something: the token an example was written around (the pronoun of "who is it?"), otherwise
// the last word of the text, the query that sees every other token even under a causal mask.
import { EXAMPLES } from './examples.js';

const WORD_LIKE = /[\p{L}\p{N}]/u;

// rowTokens: the query tokens of the result; mode and text: the state they came from.
export function defaultQuery(rowTokens, { mode, text }) {
  const example = EXAMPLES.find((e) => e.focus && e.mode === mode && e.text === text);
  const pronoun = example
    ? rowTokens.findIndex((token) => token.text.toLowerCase() === example.focus)
    : -1;
  if (pronoun >= 0) return pronoun;
  for (let i = rowTokens.length - 1; i >= 0; i--) {
    if (WORD_LIKE.test(rowTokens[i].text)) return i;
  }
  return rowTokens.length - 1;
}
