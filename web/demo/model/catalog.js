// The real models the page offers by name. Nothing here is measured: download sizes and memory
// come from the Hub's file listing and config.json when the picker opens (session.js), so
// no number is written down that nobody checked. `note` is a key in the strings; `example` the
// text the page puts in when the model is picked over one of the page's own examples (BERT
// models predict the [MASK] in it); `pair` a second sentence for BERT; `dictionary` the source
// words of a translation model's example and the words they become. The first is the model
// attnlens carries (`bundled`: no download, so it loads as soon as it is picked, offline too).
export const CATALOG = [
  {
    id: 'stories260K',
    note: 'catalogStories260K',
    example: 'Once upon a time, there was a little girl named Lily. She',
    bundled: true,
  },
  {
    id: 'roneneldan/TinyStories-1M',
    note: 'catalogTinyStories1M',
    example: 'Once upon a time there was a little girl named Lily. She',
  },
  {
    id: 'roneneldan/TinyStories-8M',
    note: 'catalogTinyStories8M',
    example: 'Once upon a time there was a little girl named Lily. She',
  },
  {
    id: 'distilgpt2',
    note: 'catalogDistilGpt2',
    example: "The animal didn't cross the street because it was too tired.",
  },
  {
    id: 'gpt2',
    note: 'catalogGpt2',
    example: "The animal didn't cross the street because it was too tired.",
  },
  {
    id: 'bert-base-uncased',
    note: 'catalogBertBase',
    example: "The animal didn't cross the street because [MASK] was too tired.",
  },
  {
    id: 'bert-base-chinese',
    note: 'catalogBertChinese',
    example: '小猫没有跳上桌子，因为[MASK]太累了。',
  },
  {
    id: 'prajjwal1/bert-tiny',
    note: 'catalogBertTiny',
    example: 'the capital of france is [MASK].',
  },
  {
    id: 'bert-base-multilingual-cased',
    note: 'catalogBertMultilingual',
    example: '我爱自然语言处理',
    pair: 'I love natural language processing',
  },
  {
    id: 'Helsinki-NLP/opus-mt-zh-en',
    note: 'catalogOpusZhEn',
    example: '我爱自然语言处理',
    // Which source word each English word translates: the Translate mode measures how much of
    // each head's attention lands there (model/alignment.js).
    dictionary: {
      我: 'I',
      爱: 'love',
      自然: 'natural',
      语言: 'language',
      处理: 'processing',
    },
  },
];

/** The catalog entry of a Hub id, or null (an id the reader typed). */
export function catalogEntry(id) {
  return CATALOG.find((entry) => entry.id === id) ?? null;
}
