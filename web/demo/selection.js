// What the views show of a result: the head picked (the state may ask for more heads than the
// result has while a recompute is on its way) and the query row being explained.
import { defaultQuery } from './default-focus.js';

export function currentHead(state, result) {
  return Math.min(state.head, result.heads.length - 1);
}

// The reader's pick (state.query, also in the URL), else the default for this text; -1 only
// when there is nothing to explain.
export function focusedQuery(state, result) {
  if (!result || result.empty) return -1;
  const rows = result.rowTokens.length;
  return state.query >= 0 && state.query < rows
    ? state.query
    : defaultQuery(result.rowTokens, state);
}
