// The models attnlens carries (src/models/bundled/), by the name loadModel() takes: no network.
// Sizes are the files' own (each folder's README has their sha256; a test checks both), so a
// page knows them before anything is read. A module of its own so the widget and the page can
// ask "is this name bundled?" without loading the model code.

export const BUNDLED = Object.freeze({
  stories260K: {
    format: 'llama2.c',
    model: {
      name: 'stories260K.bin',
      bytes: 1056540,
      url: () => new URL('../bundled/stories260K/stories260K.bin', import.meta.url),
    },
    tokenizer: {
      name: 'tok512.bin',
      bytes: 6227,
      url: () => new URL('../bundled/stories260K/tok512.bin', import.meta.url),
    },
  },
});

/** The names of the bundled models ('stories260K'). */
export const BUNDLED_MODELS = Object.freeze(Object.keys(BUNDLED));

/** Is `name` a model attnlens carries? */
export const isBundledModel = (name) => typeof name === 'string' && Object.hasOwn(BUNDLED, name);

/** The bytes a bundled model's files take (what a page fetches from its own server). */
export const bundledModelBytes = (name) =>
  BUNDLED[name].model.bytes + BUNDLED[name].tokenizer.bytes;
