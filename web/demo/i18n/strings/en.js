// English strings of the demo page, on top of the widget's (src/i18n/strings/en.js), which the
// page uses too. Keys are the same in every language (test/i18n.test.js checks it); {name}
// placeholders are filled by translate(), and the only markup, <b> and <code>, is read by the
// demo's tNodes().
export const en = {
  skip: 'Skip to the visualisation',
  tagline:
    'Attention, computed live in this tab. Type, and watch every token decide where to look.',
  engineLoading: 'starting engine…',
  engineReady: '{backend} · {where}',
  engineError: 'engine failed',
  whereWorker: 'worker',
  whereMainThread: 'main thread',
  backendLabel: 'Compute on',
  backendAuto: 'auto',
  backendWasm: 'WebAssembly',
  backendWebgpu: 'WebGPU',
  backendWebgpuSoftware: 'WebGPU (software)',
  inputTitle: 'Your text',
  mode: 'Mode',
  modeSelf: 'Self-attention',
  modeCross: 'Cross-attention',
  examples: 'Examples',
  sourceLabel: 'Source',
  sourceHint: 'keys and values: what is looked at',
  textLabel: 'Text',
  textHint: 'every token is a query, a key and a value',
  targetLabel: 'Target',
  targetHint: 'queries: who is looking',
  controls: 'Settings',
  headsLegend: 'Heads',
  headsCount: 'Number of heads',
  headShown: 'Head shown',
  headsCountN: '{n} heads',
  headDim: 'Size of each head d_k',
  modelDimReadout: 'd_model = heads × d_k = {heads} × {dk} = {model}',
  scoreLegend: 'Score function',
  scoreScaled: 'Scaled dot',
  scoreDot: 'Dot',
  scoreCosine: 'Cosine',
  scoreAdditive: 'Additive',
  narrowScoreCosine:
    'Cosine scores lie between −1 and 1, and at T = 1 softmax turns differences that small into ' +
    'almost equal weights: every row is close to uniform (see its entropy). A lower temperature ' +
    'magnifies the differences.',
  narrowScoreAdditive:
    'Additive scores span a narrow range too, a few units here, and at T = 1 softmax turns ' +
    'differences that small into almost equal weights: every row is close to uniform (see its ' +
    'entropy). A lower temperature magnifies the differences.',
  tryTemperature: 'Try T = {t}',
  temperatureLegend: 'Softmax temperature',
  temperature: 'Temperature T',
  sharp: 'sharper',
  flat: 'flatter',
  entropyReadout:
    'Mean row entropy {mean} bits, from {min} to {max} (a uniform row over all {n} keys would be ' +
    '{uniform}).',
  maskLegend: 'Mask: who may look where',
  patternGlobal: 'Global',
  patternLocal: 'Local window',
  patternDilated: 'Dilated',
  patternStrided: 'Strided sparse',
  patternFixed: 'Fixed sparse',
  patternAlign: 'Alignment window',
  crossMaskNote:
    'Target and source are two texts: position masks (causal, local, sparse, global tokens) ' +
    'would compare a position in one with a position in the other, so they are not offered. ' +
    'An alignment window lets target token i see the source keys near its proportional place ' +
    'i·(Ns−1)/(Nt−1), a monotonic alignment; padding hides source keys from every query.',
  paddedKeys: 'Padding: source keys no query may see',
  causal: 'Causal: no peeking at later tokens',
  topKSwitch: 'Top-k: each query keeps only its k best-scoring keys',
  topK: 'Keys kept per query (k)',
  lshSwitch: 'Hashed (LSH): a query sees only the keys hashed into its bucket',
  buckets: 'Hash buckets',
  rounds: 'Hashing rounds (sharing a bucket once is enough)',
  window: 'Window (each side)',
  dilation: 'Dilation',
  stride: 'Stride',
  summary: 'Summary positions per block',
  globalTokens: 'Global tokens: see and are seen by all',
  notation: 'Notation',
  compareLegend: 'Compare two masks',
  compareWith: 'Side by side with',
  compareOff: '— off —',
  splitInto: 'Split into',
  word: 'Words',
  char: 'Characters',
  subword: 'Subwords',
  colourLegend: 'Colour',
  colourScale: 'Colour scale',
  colourRange: 'Colour range',
  rangeMax: '0 – max',
  rangeUnit: '0 – 1',
  stageTitle: 'Attention weights',
  view: 'View',
  viewMatrix: 'Matrix',
  viewLines: 'Lines',
  viewHeads: 'Heads',
  viewNumbers: 'Numbers',
  tools: 'View tools',
  zoomOut: 'Zoom out',
  zoomFit: 'Fit to width',
  zoomIn: 'Zoom in',
  layout: 'Layout',
  layoutAuto: 'auto layout',
  layoutVertical: 'two columns',
  layoutHorizontal: 'two rows',
  exportPng: 'PNG',
  exportSvg: 'SVG',
  exportJson: 'JSON',
  copyLink: 'Copy link',
  reset: 'Reset',
  resetHint: 'Every setting back to its default (language and colours stay)',
  linkCopied: 'Link copied',
  linkInAddressBar: 'The address bar holds the link',
  headsHint:
    'Each head has its own query, key and value projections, so each finds its own pattern. Pick ' +
    'one to enlarge it.',
  maskedLegend: 'masked: not allowed to look',
  maskedLegendSelection: 'hatched: masked, or left out by top-k / hashing',
  keyboardHelp: 'Arrow keys move over cells · Enter explains a row · +/− zoom',
  explainTitle: 'Step by step: one query',
  costTitle: 'What it costs',
  primerTitle: 'Things to try',
  footerModel:
    'The vectors here come from hashed character n-grams plus sinusoidal positions, projected by ' +
    'seeded random (untrained) weights. The patterns show how attention computes, not what a ' +
    'trained model has learned.',
  footerOffline:
    'Nothing leaves this page: no fonts, scripts or trackers from elsewhere; it keeps working ' +
    'offline once loaded.',
  footerWidget: 'Embed it in a post →',
  heatmapLabel:
    'Attention heatmap: rows are queries, columns are keys. Arrow keys move, Enter explains the ' +
    'row.',
  heatmapLabelMask:
    'Attention heatmap with mask {mask}: rows are queries, columns are keys. Arrow keys move, ' +
    'Enter explains the row.',
  columnMeanRow: 'key mean',
  linesLabel: 'Line view: queries on one side, keys on the other, line width is the weight',
  linesLegend: 'Line width and colour: the weight',
  sourceKeys: 'source (keys)',
  targetQueries: 'target (queries)',
  tableCaption:
    'Attention weights of head {head}: each row is a query token, each column a key token; each ' +
    'row sums to 1.',
  tablePartial: 'Only query {n} is listed here; the Numbers view holds every row.',
  tableRegion: 'Attention weights, as numbers',
  captionSelf:
    '<b>{n}</b> tokens · head <b>{head}</b> of {heads} · {score} · T = {t} · mask ' +
    '<code>{mask}</code>',
  captionCross:
    '<b>{nt}</b> target × <b>{ns}</b> source tokens · head <b>{head}</b> of {heads} · {score} · ' +
    'T = {t} · mask <code>{mask}</code>',
  maskCaption: 'mask',
  tokensCountCross: 'target {nt} · source {ns} tokens',
  clickTokenHint: 'click a token to explain it',
  emptyText: 'Type something above to see its attention.',
  computing: 'computing…',
  errorPrefix: 'Cannot compute: {message}',
  linkProblem: 'This link’s {param}={value} could not be used, so the default is shown instead.',
  // explain panel
  explainPick:
    'Pick a query: click a row of the matrix, a token above, or press Enter on a heatmap cell.',
  explainQuery: 'query',
  explainMeta: 'token {i} · head {head} · d_k = {d} · {score} · T = {t}',
  step1Title: 'Score every key',
  step1Dot:
    'The query vector is compared with each key vector by a dot product: large when they point ' +
    'the same way.',
  step1Cosine:
    'Cosine similarity: the dot product of the unit vectors, always between −1 and 1, blind to ' +
    'length.',
  step1Additive:
    'Additive (Bahdanau) score: a small learned network v·tanh(W_q q + W_k k) rates each pair.',
  step1Vectors: 'first {n} of {d} dimensions; the selected key is {key}',
  step1VectorsAll: 'all {d} dimensions; the selected key is {key}',
  step1Sum: 'q · k = Σ q_d k_d = {value}',
  step2Title: 'Scale and temperature',
  step2Scaled:
    'Divide by √d_k = {root} so the scores do not grow with the vector size, then by T = {t}.',
  step2Plain: 'This score is not scaled (scale 1); only the temperature T = {t} divides it.',
  spreadMeasuring: 'Measuring the spread of q·k at every d_k…',
  spreadCaption:
    'Spread (standard deviation) of the raw scores q·k of this text (at most its first {tokens} ' +
    'tokens) with these heads, at every head size d_k',
  spreadRaw: 'σ(q·k)',
  spreadScaled: 'σ(q·k)/√d_k',
  spreadText:
    'Unscaled, the spread grows about as √d_k: with wide heads softmax sees huge differences and ' +
    'saturates onto one key. Divided by √d_k it stays about the same at every size.',
  step3Title: 'Mask',
  step3None: 'Nothing is masked: this query may look at all {n} keys.',
  step3Some:
    '{hidden} of {n} keys are masked: their logit becomes −∞, so softmax gives them exactly 0.',
  step3Empty: 'All {n} keys are masked: this query may look at nothing, so every logit becomes −∞.',
  step3KeyVisible: '{key} is visible: x({key}) = {x} stays',
  step3KeyMasked: '{key} is masked: x({key}) = {x} becomes −∞',
  selectLsh:
    'Hashing (LSH, {buckets} buckets, {rounds} round(s)) put this query in bucket {bucket} (one ' +
    'per round). {same} of the {n} visible keys share its bucket in some round and stay; the ' +
    'other {out} are left out: their logit becomes −∞.',
  selectLshKeyIn: '{key} is in bucket {bucket}: it shares one with the query and stays',
  selectLshKeyOut: '{key} is in bucket {bucket}: no round shares the query’s, so its x becomes −∞',
  selectTopK:
    'Top-k keeps the {k} largest logits of the {n} keys still in; the lowest of those kept is ' +
    'x({kth}) = {xk}. The other {out} are left out: their logit becomes −∞ (equal logits go to ' +
    'the earlier key).',
  selectTopKAll: 'Top-k keeps up to {k} keys; only {n} are still in, so all of them stay.',
  selectTopKKeyIn: 'x({key}) = {x} ≥ x({kth}) = {xk}: {key} is one of the {k} kept',
  selectTopKKeyOut:
    'x({key}) = {x} is not among the {k} largest (the lowest kept is {xk}): {key} is left out, ' +
    'its logit becomes −∞',
  selectGlobal:
    'Global tokens belong to the mask, which comes first: a global query may look at every key ' +
    'and a global key may be seen by every query, but top-k and hashing then choose among those ' +
    'keys like any others, so a global token can be left out too.',
  step4Title: 'Softmax',
  step4Text:
    'Exponentiate and normalise: w_j = exp(x_j) / Σ exp(x). The weights are positive and sum to ' +
    '{sum}. Entropy {h} bits.',
  step4Kept:
    'The sum Σ′ runs over the {n} keys left in, not all {visible} visible ones: each key left ' +
    'out adds exp(−∞) = 0.',
  step4NoneLeft:
    'Hashing left this query no key: with nothing to normalise every weight is 0 (they sum to 0, ' +
    'not 1), as the engine defines it.',
  step4Empty:
    'With nothing visible there is nothing to normalise: every weight is 0 (they sum to 0, not ' +
    '1). The engine defines it so instead of dividing by zero.',
  step5Title: 'Weighted sum of values',
  step5Text:
    'The output for this query mixes the value vectors by those weights: z = Σ w_j v_j. Biggest ' +
    'contributions: {top}.',
  step5Empty: 'No key is visible, so the output z of this query is the zero vector, by definition.',
  step5NoneLeft: 'No key is left, so the output z of this query is the zero vector, by definition.',
  stripeNote:
    'Every query of this head gives {key} {mean} on average, against {w} here: {key} is a column ' +
    'stripe (a sink every query looks at), not a match for this query. The layer is untrained.',
  standoutNote:
    'The other queries give {key} {mean} on average, against {w} here: this query picks it out ' +
    '(in an untrained layer, by its random projections, not by what the words mean).',
  colKey: 'key',
  colScore: 'q·k',
  colScoreCosine: 'cos(q,k)',
  colScoreAdditive: 'score',
  colMean: 'key mean',
  colMeanHint: 'The mean weight every query that may see this key gives it (a column stripe)',
  keyTableCaption: 'Every key of this query: raw score, logit, weight and the key mean',
  colLogit: 'logit',
  colBucket: 'bucket',
  colBucketHint: 'The key’s hash bucket in each round (LSH): it stays when one matches the query’s',
  colWeight: 'weight',
  maskedCell: 'masked',
  showAll: 'Show all {n} keys',
  showTop: 'Show the top {n}',
  // cost panel
  costIntro:
    'A materialized kernel writes out the N² scores of a head before softmax, one head at a ' +
    'time: that N×N matrix is the memory below. The streaming (Flash-style) kernel walks the ' +
    'keys tile by tile with an online softmax and keeps only O(N) state.',
  costMaterialized: 'Full weight matrix (materialized)',
  costStreaming: 'Tiled streaming kernel',
  costShape: 'N = {n} tokens, {heads} heads, d = {d}',
  costChart:
    'Working memory as N grows (log-log): {ratio}× apart at N = {n}, the longest whose full ' +
    'matrix fits wasm32 memory.',
  kernelTime: 'Last run, kernels',
  totalTime: 'Last run, in all',
  totalTimeParts: 'tokens, embeddings, kernels, masks',
  coldRun: 'first call: includes compiling the kernels',
  backend: 'Backend',
  thread: 'Computed in',
  runtime: '{ms} ms',
  benchButton: 'Measure at N = {n}',
  benchRunning: 'measuring…',
  benchExplain: 'Random Q/K/V at this length with your mask and heads, best of 3 per strategy.',
  benchStrategy: 'strategy',
  benchTime: 'time',
  benchMemory: 'memory',
  benchTiles: 'tiles computed',
  costSelection:
    'Top-k and hashing kept {kept} of the {visible} (query, key) pairs the mask allows, over ' +
    'all heads. The other {share}% were scored, then left out of the softmax and the weighted ' +
    'sum of values.',
  benchScores: 'scores computed',
  benchSelectionNote:
    'Top-k and hashing choose keys by score or hash, so every key the mask allows is scored ' +
    'first (with top-k the streaming kernel scores twice: once to choose, once to attend). ' +
    'They save the softmax and the weighted sum over the keys left out, not the scoring.',
  benchMaterialized: 'materialized',
  benchStreaming: 'streaming',
  benchSkipped:
    'The mask hid {skipped} of {total} tiles of keys from their queries ({share}%): the ' +
    'streaming ' +
    'kernel skipped them.',
  benchNoSkipGlobal:
    'The streaming kernel computed all {total} tiles: without a mask every query needs every ' +
    'key. ' +
    'It saves memory here, not work.',
  benchNoSkipScattered:
    'The streaming kernel computed all {total} tiles: the keys this mask keeps are spread over ' +
    'the whole row, so every tile holds some key a query may see and none can be skipped. It ' +
    'saves memory here, not work.',
  benchNoSkipShort:
    'The streaming kernel computed all {total} tiles: at this length the mask hides no whole ' +
    'tile of keys from a block of queries.',
  // ideas
  ideaPronounTitle: 'Who is "it"?',
  ideaPronounText:
    'The layer is untrained, so no head knows what "it" refers to. Explain the row of "it" and ' +
    'set each weight beside its key mean (the strip under the matrix): when every query of a ' +
    'head gives "animal" about as much, that is a column stripe, a sink, not a match.',
  ideaScaleTitle: 'Why divide by √d_k',
  ideaScaleText:
    'Plain dot at d_k = 64: each score is a sum of 64 products, so the raw scores spread about ' +
    '√64 = 8 times as wide as one product, and softmax saturates onto one key per row. Step 2 of ' +
    'the explanation shows the spread at every d_k; scaled dot divides by √d_k and brings the ' +
    'rows back.',
  ideaTempTitle: 'Temperature',
  ideaTempText:
    'Slide T down to 0.2 and each row collapses onto its best key; up to 5 and it spreads ' +
    'evenly. Watch the entropy column.',
  ideaCausalTitle: 'Causal mask',
  ideaCausalText:
    'A decoder must not read the future: the upper triangle turns into hatching and each row ' +
    'renormalises over the past.',
  ideaLocalTitle: 'Global versus local',
  ideaLocalText:
    'A local window keeps a band around the diagonal, Longformer-style. Compare it side by side ' +
    'with full attention.',
  ideaSparseTitle: 'Sparse patterns',
  ideaSparseText:
    'Strided attention keeps nearby keys plus every S-th one; with a global token one position ' +
    'talks to all.',
  ideaCrossTitle: 'Cross-attention and alignment',
  ideaCrossText:
    'Queries from one text, keys and values from another. This layer is untrained and the two ' +
    'sentences share no letters, so no head aligns them: what stands out are column stripes, ' +
    'keys every query favours. Compare each weight with its key mean before reading a match.',
  ideaHeadsTitle: 'Many heads',
  ideaHeadsText:
    'Eight heads look at the same tokens through eight projections. Open the Heads view to ' +
    'compare their patterns.',
  tryIt: 'Try it',
  tryItNamed: 'Try it: {title}',
  exampleEnglish: 'English: who is “it”?',
  exampleChinese: '中文 sentence',
  exampleLong: 'Long Chinese run',
  exampleCross: 'Translation pair',
  // watch it learn
  learnTitle: 'Watch it learn',
  learnIntro:
    'A tiny transformer trains in this tab, on the same kernels. Early on its attention is ' +
    'spread out; as it learns, heads sharpen into focus, and some find a job: looking at the ' +
    'previous token, or at the token that followed the last time this one appeared (an ' +
    'induction head).',
  learnCorpus: 'What it learns from',
  learnCorpusRandom: 'Repeated random sequences',
  learnCorpusEnglish: 'English sample',
  learnCorpusChinese: 'Chinese sample',
  learnCorpusOwn: 'Your text',
  learnOwnLabel: 'Text to learn from',
  learnFalling: 'Falling temperature: 4 → 1 over the first 1000 steps',
  learnTrain: 'Train',
  learnPause: 'Pause',
  learnResume: 'Continue',
  learnStep: 'Step',
  learnReset: 'Start over',
  learnIdle: 'Not trained yet: press Train, or Step for one step at a time.',
  learnStatus: 'step {steps} · loss {loss} · temperature {temperature} · {model}',
  learnModel:
    '{layers} layers × {heads} heads, width {width}, {context} positions, {vocabulary} tokens',
  learnNeedText: 'Give it a text of at least two characters to learn from.',
  learnError: 'Training stopped: {message}',
  learnLossTitle: 'Loss (nats)',
  learnLossLabel: 'Loss over {steps} steps: {first} at the start, {last} now',
  learnLossEmpty: 'No steps yet: the loss appears here once it trains.',
  learnEntropyTitle: "Each head's mean row entropy (bits): it falls as the head sharpens",
  learnEntropyLabel:
    "Every head's mean row entropy over the snapshots, in bits; layer 1 dashed, layer 2 " +
    'solid, the selected head bold',
  learnEntropyEmpty: "No snapshots yet: each head's entropy appears here once it trains.",
  learnPreviousNote:
    'Dotted: the run before, to compare (say, with and without the falling temperature).',
  learnTimeline: 'Snapshot',
  learnAtStep: 'step {step}',
  learnHeadsEmpty: "Every head's attention on a probe sequence appears here once training starts.",
  learnHeadName: 'L{layer} H{head}',
  learnLabelEmerged: '{head} became a {label} head at step {step}',
  'learnLabel:previous-token': 'previous-token',
  'learnLabel:induction': 'induction',
  'learnLabel:sink': 'sink',
};
