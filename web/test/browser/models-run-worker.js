// The module worker of models-run.test.mjs, bundled by the test with esbuild (import maps do not
// reach workers, so a worker gets the package's dependencies from a bundler, as an app's would).
import { createAttention } from '../../src/index.js';
import { loadModel } from '../../src/models/index.js';

self.onmessage = async ({ data: { folder, text, backend } }) => {
  try {
    const attention = await createAttention({ backend, threads: 1, models: true });
    const model = await loadModel(folder, { attention });
    const run = await model.run(text, { returnLogits: true });
    postMessage({ info: model.info, run });
    model.dispose();
    attention.dispose();
  } catch (error) {
    postMessage({ error: `${error.name}: ${error.message}` });
  }
};
