// English strings of the <attn-lens> widget, the package's only strings: its views, a model
// that did not load, and its models and snapshots. The demo page adds its own
// (demo/i18n/strings/) to these. Keys are the same in every language (test/i18n.test.js checks
// it); {name} placeholders are filled by translate().
export const en = {
  // the views' words, which the demo's views use too
  headN: 'head {n}',
  entropyColumn: 'H (bits)',
  maskedWord: 'masked',
  leftOutWord: 'left out',
  heatmapRole: 'heatmap',
  queries: 'queries',
  keys: 'keys',
  tableCorner: 'query \\ key',
  tokensCount: '{n} tokens',
  tokensCountOne: '{n} token',
  // the <attn-lens> widget (it also uses the strings above)
  widgetLoading: 'computing attention…',
  widgetError: 'attn-lens: {message}',
  widgetTokensCross: '{nt} × {ns} tokens',
  widgetHeadOf: 'head {n} of {of}',
  widgetHeatmapLabel: 'Attention heatmap: rows are queries, columns are keys. Arrow keys move.',
  widgetLinesLabel: 'Attention lines',
  widgetSource: 'source',
  widgetTarget: 'target',
  widgetTableCaption: 'Attention weights of head {n}',
  widgetOpen: 'Open in attnlens',
  widgetAllHeads: '← all heads',
  // score names in running text (also the demo's scoreName())
  'score:scaled-dot': 'scaled dot',
  'score:dot': 'dot',
  'score:cosine': 'cosine',
  'score:additive': 'additive',
  // a model that did not load (src/models/load-failure.js), also in the demo's picker
  modelFailUnreachable:
    'Could not reach the Hugging Face Hub for {model}: this browser seems to be offline, or ' +
    'something blocks the Hub here.',
  modelFailNotFound: 'The Hub has no model {model} (not found, HTTP 404): check the id.',
  modelFailDenied:
    'The Hub would not give {model} (HTTP {status}): there is no such public model. It may be ' +
    'private, gated or misspelled; attnlens reads public models only.',
  modelFailGated:
    '{model} is gated on the Hub (HTTP {status}): its files come only to signed-in users who ' +
    'accepted its terms, which a page cannot do for you.',
  modelFailServer: 'The Hub answered with an error for {model} (HTTP {status}): try again later.',
  modelFailInterrupted: 'The download of {model} broke off before it was complete.',
  modelFailTooLarge: '{model} is too large for this browser’s memory.',
  modelFailOther: 'Could not load {model}: {message}',
  modelRetry: 'Try again',
  // a real model's views
  layerN: 'layer {n}',
  // <attn-lens> with a model or a snapshot
  widgetLoadModel: 'Load model ({size})',
  widgetLoadModelUnknown: 'Load model (size unknown)',
  widgetModelLoading: 'loading {model}… {done}',
  widgetLayerHead: 'layer {layer} · head {head}',
  widgetCrossAttention: 'cross-attention',
  widgetSnapshotAbout: 'snapshot of {model} · {date}',
  widgetLayer: 'Layer',
  widgetImageLoading: 'fetching the picture {image}…',
  widgetImageFailed: 'The picture could not be used: {message}',
  widgetHead: 'Head',
  widgetHeadMean: 'mean of heads',
  widgetOpacity: 'Opacity',
  widgetPictureLabel: 'Layer {layer}, {who}: where the class token looks in the picture',
  widgetPictureView: 'View',
  widgetPictureHeads: 'head maps',
  widgetPictureRollout: 'rollout across layers',
  widgetPictureRolloutLabel:
    'Attention rollout of the class token across all {layers} layers: where the picture ' +
    'reaches the answer, every head and the residual mixed in',
  widgetTopLabels: 'Top labels',
  widgetExportSnapshot: 'Export snapshot',
  predictionMoved: 'was #{from}',
  predictionNew: 'new',
  // a snapshot's "Which heads matter" and "Logit lens" (the page's panels draw them too)
  headsMatterTitle: 'Which heads matter',
  effectsHead: 'H{n}',
  effectsCell: 'layer {layer}, head {head}: {delta}',
  effectsCellOff: 'layer {layer}, head {head}: {delta}, switched off',
  effectsCaption:
    'Each head zeroed in turn: how the log-probability of “{target}” (now {p}) changes. ' +
    'Red: the head helps it; blue: the head works against it.',
  effectsNotMeasured: 'The heads’ effects were not measured.',
  effectsTop: 'Heads that matter most',
  effectsRanked: 'layer {layer} · head {head}: {delta}',
  ablationBefore: 'All heads on',
  ablationAfter: '{n} heads off',
  ablationAfterOne: '1 head off',
  ablationNoneOff: 'Switch heads off to see the predictions change.',
  logitLensTitle: 'Logit lens',
  lensEmbeddings: 'embeddings',
  lensPosition: 'position {n}: {token}',
  lensCell: '{state}, at “{token}”: {top}, {p}',
  lensCellFirst: '{state}, at “{token}”: {top}, {p}; the final answer from this layer on',
  lensDetail: '{state} at “{token}”',
  lensCaption:
    'The top token of each layer’s residual stream at each position, through the model’s ' +
    'final norm and output layer; darker: more probable. Outlined: the layer from which the ' +
    'final answer stays on top.',
};
