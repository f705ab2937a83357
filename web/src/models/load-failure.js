// Why a model did not load, as a sentence of the string tables (i18n/strings/) with its values:
// read from the error's machine-readable `reason` (files/download.js, files/remote.js) or `code`,
// never from its message. The demo's model picker and the <attn-lens> widget both say it so.

const SENTENCES = {
  unreachable: 'modelFailUnreachable',
  not_found: 'modelFailNotFound',
  denied: 'modelFailDenied',
  gated: 'modelFailGated',
  server: 'modelFailServer',
  interrupted: 'modelFailInterrupted',
  too_large: 'modelFailTooLarge',
};

/**
 * @param {unknown} error what loadModel() or listModelFiles() threw
 * @param {string} model the model's name as the reader knows it (a Hub id)
 * @returns {{ reason: string, key: string, values: { model: string, status: string,
 *   message: string } }} reason: one of SENTENCES' keys or 'other'
 */
export function loadFailure(error, model) {
  // Weights the wasm heap cannot hold: loadModel's out_of_range on `model`, or out_of_memory.
  const tooLarge =
    error?.code === 'out_of_memory' ||
    (error?.code === 'out_of_range' && error?.parameter === 'model');
  const reason = error?.reason ?? (tooLarge ? 'too_large' : 'other');
  return {
    reason,
    key: SENTENCES[reason] ?? 'modelFailOther',
    values: {
      model,
      status: error?.status === undefined ? '' : String(error.status),
      message: String(error?.message ?? error),
    },
  };
}
