// For tests that load and run a model in a bounded worker (bounded.mjs): the token count of one
// run, the model disposed.

import { loadModel } from '../../src/models/index.js';

export async function runModel(folder, text) {
  const model = await loadModel(folder);
  try {
    return (await model.run(text)).tokens.length;
  } finally {
    model.dispose();
  }
}
