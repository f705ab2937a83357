// Every element of index.html that the demo's modules read or write, looked up once when the page
// starts (module scripts run after the document is parsed). A missing id fails here, loudly, not
// later in whichever handler first touches it.

function byId(id) {
  const element = document.getElementById(id);
  if (!element) throw new Error(`attnlens demo: index.html has no #${id}`);
  return element;
}

const all = (selector) => [...document.querySelectorAll(selector)];

// The mask parameters' sliders: #window-param holds #window-input and its #window-output.
function slider(name) {
  return {
    param: byId(`${name}-param`),
    input: byId(`${name}-input`),
    output: byId(`${name}-output`),
  };
}

export const elements = {
  // masthead
  backendSelect: byId('backend-select'),
  backendOptionWebgpu: byId('backend-option-webgpu'),
  engineBadge: byId('engine-badge'),
  languageButtons: all('.lang-switch button'),

  // the model picker (model/picker.js)
  modelKind: all('input[type="radio"][name="model-kind"]'),
  modelPicker: byId('model-picker'),
  modelList: byId('model-list'),
  modelHubForm: byId('model-hub-form'),
  modelHubId: byId('model-hub-id'),
  modelHubError: byId('model-hub-error'),
  modelDrop: byId('model-drop'),
  modelKeptFiles: byId('model-kept-files'),
  modelFiles: byId('model-files'),
  modelDetails: byId('model-details'),
  // what shows for the untrained layer only, and for a real model only
  playgroundOnly: all('[data-playground]'),
  modelOnly: all('[data-model-only]'),

  // composer: the texts and their tokens
  examples: byId('examples'),
  resetButton: byId('reset-button'),
  texts: byId('texts'),
  sourceField: byId('source-field'),
  sourceText: byId('source-text'),
  textLabel: byId('text-label'),
  textHint: byId('text-hint'),
  mainText: byId('main-text'),
  pairField: byId('pair-field'),
  pairText: byId('pair-text'),
  insertMask: byId('insert-mask'),
  tokenStrip: byId('token-strip'),
  statusLine: byId('status-line'),
  linkNotice: byId('link-notice'),

  // settings
  controlsDetails: byId('controls-details'),
  radios: Object.fromEntries(
    ['mode', 'score', 'granularity', 'scale', 'range', 'pattern'].map((name) => [
      name,
      all(`input[type="radio"][name="${name}"]`),
    ]),
  ),
  headsInput: byId('heads-input'),
  headsOutput: byId('heads-output'),
  headPicker: byId('head-picker'),
  dkInput: byId('dk-input'),
  dkOutput: byId('dk-output'),
  modelDimReadout: byId('model-dim-readout'),
  // settings shown in one mode only (data-mode="self" or "cross")
  modeOnly: all('.controls [data-mode]:not(option)'),
  scoreHint: byId('score-hint'),
  temperatureInput: byId('temperature-input'),
  temperatureOutput: byId('temperature-output'),
  entropyReadout: byId('entropy-readout'),
  causalInput: byId('causal-input'),
  sliders: {
    window: slider('window'),
    dilation: slider('dilation'),
    stride: slider('stride'),
    summary: slider('summary'),
    topK: slider('top-k'),
    buckets: slider('buckets'),
    rounds: slider('rounds'),
  },
  // top-k and LSH: switches that add or remove the part (their sliders are above)
  topKSwitch: byId('top-k-switch'),
  lshSwitch: byId('lsh-switch'),
  globalTokens: byId('global-tokens'),
  paddedKeys: byId('padded-keys'),
  maskCode: byId('mask-code'),
  compareSelect: byId('compare-select'),
  // a real model's settings (model/controls.js)
  layerSelect: byId('layer-select'),
  modelHeadSelect: byId('model-head-select'),
  headLabelReadout: byId('head-label-readout'),
  wordsInput: byId('words-input'),
  blockSwitch: byId('block-switch'),
  blockInput: byId('block-input'),
  snapshotScope: byId('snapshot-scope'),
  surgeryInput: byId('surgery-input'),
  surgeryNote: byId('surgery-note'),
  surgeryLayerSelect: byId('surgery-layer-select'),
  maskEditor: byId('mask-editor'),

  // stage: the views of the result
  stage: byId('stage'),
  viewTabs: all('#view-tabs [role="tab"]'),
  viewTools: byId('view-tools'),
  zoomTools: byId('zoom-tools'),
  zoomOut: byId('zoom-out'),
  zoomReset: byId('zoom-reset'),
  zoomIn: byId('zoom-in'),
  lineTools: byId('line-tools'),
  orientationSelect: byId('orientation-select'),
  exportPng: byId('export-png'),
  exportSvg: byId('export-svg'),
  exportJson: byId('export-json'),
  copyLink: byId('copy-link'),
  exportSnapshot: byId('export-snapshot'),
  viewCaption: byId('view-caption'),
  panels: {
    matrix: byId('panel-matrix'),
    lines: byId('panel-lines'),
    heads: byId('panel-heads'),
    numbers: byId('panel-numbers'),
    model: byId('panel-model'),
    overlay: byId('panel-overlay'),
    focus: byId('panel-focus'),
    rollout: byId('panel-rollout'),
    sinks: byId('panel-sinks'),
  },
  modelWaiting: byId('model-waiting'),
  modelGrid: byId('model-grid'),
  overlayHeads: byId('overlay-heads'),
  overlayLines: byId('overlay-lines'),
  focusTable: byId('focus-table'),
  rolloutView: byId('rollout-view'),
  sinksPlot: byId('sinks-plot'),
  matrixPair: byId('matrix-pair'),
  matrixCaptionA: byId('matrix-caption-a'),
  heatmapA: byId('heatmap-a'),
  compareFigure: byId('compare-figure'),
  matrixCaptionB: byId('matrix-caption-b'),
  heatmapB: byId('heatmap-b'),
  lines: byId('lines'),
  headsGrid: byId('heads-grid'),
  weightsTable: byId('weights-table'),
  legendLo: byId('legend-lo'),
  legendBar: byId('legend-bar'),
  legendHi: byId('legend-hi'),
  legendHelp: byId('legend-help'),
  legendMasked: byId('legend-masked'),

  // insights and primer
  explainBody: byId('explain-body'),
  explainCard: byId('explain'),
  predictions: byId('predictions'),
  predictionsBody: byId('predictions-body'),
  compare: byId('compare'),
  compareOpen: byId('compare-open'),
  compareBody: byId('compare-body'),
  // "Which heads matter" and "Logit lens" (model/lens-panels.js)
  headsMatter: byId('heads-matter'),
  headsMatterOpen: byId('heads-matter-open'),
  headsMatterBody: byId('heads-matter-body'),
  logitLens: byId('logit-lens'),
  logitLensOpen: byId('logit-lens-open'),
  logitLensBody: byId('logit-lens-body'),
  costBody: byId('cost-body'),
  primer: byId('primer'),

  // "Watch it learn" (learn/learn-panel.js)
  learn: {
    corpusInputs: all('input[type="radio"][name="learn-corpus"]'),
    ownField: byId('learn-own-field'),
    ownText: byId('learn-own-text'),
    falling: byId('learn-falling'),
    train: byId('learn-train'),
    step: byId('learn-step'),
    reset: byId('learn-reset'),
    status: byId('learn-status'),
    announce: byId('learn-announce'),
    loss: byId('learn-loss'),
    entropy: byId('learn-entropy'),
    entropyKey: byId('learn-entropy-key'),
    previousNote: byId('learn-previous-note'),
    timeline: byId('learn-timeline'),
    timelineOutput: byId('learn-timeline-output'),
    heads: byId('learn-heads'),
  },
};
