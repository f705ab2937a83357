// English strings of real models on the demo page (model picker, views, predictions, mask
// surgery, snapshots). Merged into the page's table by demo/i18n.js; the same keys and
// placeholders exist in zh-models.js (test/i18n.test.js checks it).
export const enModels = {
  // the model picker
  modelBarTitle: 'Model',
  modelUntrained: 'Untrained layer (instant)',
  modelReal: 'Real model',
  modelKindHint:
    'The untrained layer shows how attention computes; a real model shows what a trained one ' +
    'learned. stories260K comes with the page; nothing else downloads until you press Load.',
  modelListLabel: 'Trained models: one bundled, the others on the Hugging Face Hub',
  modelHubLabel: 'Another Hub id',
  modelHubGo: 'Look up',
  modelDropLabel:
    'Or your own files (config.json, tokenizer.json, model.safetensors or pytorch_model.bin; ' +
    'a llama2.c .bin with its tok*.bin; or a .gguf): drop them here or pick them',
  catalogStories260K:
    'Llama 2 architecture (llama2.c), trained on children’s stories: bundled, 1 MB, instant',
  catalogTinyStories1M: 'GPT-Neo, local and global layers in turn; trained on children’s stories',
  catalogTinyStories8M: 'the same family, wider',
  catalogDistilGpt2: 'GPT-2, distilled to fewer layers',
  catalogGpt2: 'GPT-2 small',
  catalogBertBase: 'BERT, English, lower case: fills in [MASK]',
  catalogBertChinese: 'BERT, Chinese, one character a token',
  catalogBertTiny: 'BERT, the smallest',
  catalogBertMultilingual: 'BERT, many languages: a sentence and its translation as a pair',
  catalogOpusZhEn: 'Marian, Chinese to English: translates, and shows where each word looked',
  modelChecking: 'checking the size…',
  modelSizeUnknown:
    'Size unknown: this browser is offline and has not kept this model. Load tries anyway.',
  modelSizeUnknownShort: 'size unknown (offline)',
  modelUnavailable: 'not available',
  modelSizeCached: '{size}, in this browser',
  modelShape: '{type} · {layers} layers × {heads} heads · {parameters} parameters',
  modelDownload: 'Download: {size} in {n} files.',
  modelDownloadUnknown: 'Download: {n} files; the server does not say how large.',
  modelMemory:
    'Memory: {size} of weights ({dtype}) in WebAssembly, plus {scratch} for a moment while ' +
    'loading; the downloaded files are held until the weights are in.',
  modelCached: 'Every file is in this browser’s cache: it loads offline.',
  modelDtypeLabel: 'Weights stored as',
  modelDtypeF32: 'f32 (as trained)',
  modelDtypeF16: 'f16 (half the memory)',
  modelDtypeQ8: 'q8 (8-bit blocks: about a quarter of the memory)',
  modelDtypeQ4: 'q4 (4-bit blocks: about a fifth of the memory)',
  modelMissing:
    'Cannot load: the repository has no {files}. attnlens reads tokenizer.json (a model with ' +
    'only vocab.txt needs it converted).',
  modelTooLarge: 'Will not fit: {reason}',
  modelTooLargeDevice:
    'while it loads it needs about {size}, more than half of the {device} GB this device ' +
    'reports',
  modelLoad: 'Load model ({size})',
  modelLoadUnknown: 'Load model (size unknown)',
  modelFromCache: 'from this browser',
  modelCancel: 'Cancel',
  modelChange: 'Choose another model',
  modelStarting: 'starting the download…',
  modelTotal: 'total',
  modelCancelled: 'Cancelled: nothing half-downloaded was kept.',
  modelFailNext:
    'The bundled model needs no network. Or, if you have the model’s files (config.json, ' +
    'tokenizer.json and the weights), drop them in the box for your own files.',
  modelUseBundled: 'Use the bundled model (stories260K)',
  modelLoaded:
    'Loaded: {type} · {layers} layers × {heads} heads · {parameters} parameters · {backend}. ' +
    'Kept in this browser for next time.',
  modelLoadedBundled:
    'Loaded: {type} · {layers} layers × {heads} heads · {parameters} parameters · {backend}. ' +
    'It comes with the page: no download, offline too.',
  modelLoadedFiles:
    'Loaded: {type} · {layers} layers × {heads} heads · {parameters} parameters · {backend}.',
  modelLoadedOffline:
    'Loaded from this browser’s cache, no network needed: {type} · {layers} layers × {heads} ' +
    'heads · {parameters} parameters · {backend}.',
  modelYourFiles: 'Your files ({n})',
  modelYourFilesShort: 'your files',
  modelPickFilesAgain: 'Pick or drop the model’s files again: a link cannot carry them.',
  modelFilesLooking: 'Looking for your files kept in this browser…',
  modelFilesSaving: 'Keeping them in this browser for next time…',
  modelFilesKept:
    'Kept in this browser for next time (not in the link: a link cannot carry files).',
  modelFilesNotKept:
    'This browser would not keep them (its storage refused or is full): next time, pick them ' +
    'again.',
  modelFilesKeptList: 'Your files, kept in this browser: {names}.',
  modelUseKeptFiles: 'Use them',
  modelForgetFiles: 'Forget these files',
  modelWaiting: 'Load the model (above) to see its attention.',
  modelLoading: 'Loading the model…',
  modelRunning: 'Running the model…',
  modelRunFailed: 'The model could not run on this text: {message}',
  modelCounts: '{n} {unit}',
  modelTruncated: 'the first {shown} of {total} tokens',
  unitTokens: 'tokens',
  unitWords: 'words',
  // the texts
  pairLabel: 'Second sentence',
  pairHint: 'optional: BERT reads [CLS] first [SEP] second [SEP]',
  insertMask: 'Put [MASK] at the cursor',
  // settings
  layerHeadLegend: 'Layer and head',
  layerLabel: 'Layer',
  headSelectLabel: 'Head',
  layerOption: 'layer {n} · {mask}',
  headOption: 'head {n} · {label}',
  wordsToggle: 'Read as words: pieces grouped back into the words of the text',
  blockToggle: 'Only the block between the two sentences',
  snapshotScope: 'A snapshot holds',
  'snapshotScope:head': 'this head (about {size})',
  'snapshotScope:layer': 'this layer, every head (about {size})',
  'snapshotScope:all': 'every layer and head (about {size})',
  surgeryToggle: 'Mask surgery: replace the model’s own masks',
  surgeryWhere: 'Apply to',
  surgeryEveryLayer: 'every layer',
  surgeryOff: 'Off: each layer uses its own mask ({masks}).',
  surgeryNote: 'The layers chosen use {mask}; before and after are shown side by side.',
  surgeryBefore: 'before: its own mask',
  surgeryAfter: 'after:',
  surgeryNone: 'none',
  // views
  viewModel: 'Model',
  viewOverlay: 'Head view',
  viewFocus: 'Token focus',
  modelViewHint:
    'Every layer (down) and head (across). Under each: the job it earns on random tokens ' +
    'repeated twice (induction, previous token, sink), else what it does most on this text; ' +
    'hover or focus for the measures. Pick one to open it.',
  overlayHint:
    'One layer’s heads drawn over each other, each in its colour. Choose the layer in the ' +
    'settings and the heads here.',
  overlayHeads: 'Heads drawn',
  overlayLabel: 'Attention lines of the heads of layer {layer}, each in its colour',
  focusHint: 'Pick a token above: for every layer and head, the key it looks at most and how much.',
  focusCaption: 'Where “{query}” looks: the key each head gives it most',
  focusCell: '{key} {weight}: layer {layer}, head {head}',
  viewRollout: 'Rollout and flow',
  viewSinks: 'Attention sinks',
  rolloutHint:
    'Pick a token above: how much of it comes from each input token once every layer is ' +
    'counted, read two ways.',
  rolloutCaption: 'Where “{query}” draws from, through all {layers} layers',
  rolloutToken: 'Token',
  rolloutColumn: 'Rollout',
  flowColumn: 'Flow',
  rolloutRegion: 'Rollout and flow of the picked token, as a table',
  rolloutAssumes:
    'assumes information mixes linearly: each layer’s heads averaged, half of every token kept ' +
    'by the residual connection (0.5·A + 0.5·I), the layers multiplied one after another.',
  flowAssumes:
    'treats the same weights as pipe capacities: the most that can flow from this token back ' +
    'to each input, paths competing for the narrowest layer. Both leave out the values, the ' +
    'MLPs and the norms: a guide to where information can come from, not the model’s reasons.',
  rolloutLater: 'Later tokens are not listed: in a causal model they never reach this one.',
  flowPending: 'Computing the flow…',
  flowRefused: 'No flow for this text: {message}',
  rolloutWords: 'These readings are computed over tokens: turn off “Read as words” to see them.',
  sinksHint:
    'How much of each head’s attention parks on the first token, averaged over the other ' +
    'tokens: heads with nothing to do often put it there.',
  sinksCaption:
    'Share of attention on the first token “{token}”, each head a dot, by layer ' +
    '(mean over {rows} rows)',
  sinksAxisLayer: 'layer',
  sinksCaptionBos:
    'Share of attention on the first token “{token}” (circles) and on “{bos}” (squares), ' +
    'each head a mark, by layer (mean over {rows} rows)',
  sinksBosDot: 'layer {layer}, head {head}: {share} on “{token}”',
  sinksBosMeanColumn: 'Mean on “{token}”',
  sinksDot: 'layer {layer}, head {head}: {share} on the first token',
  sinksLayerColumn: 'Layer',
  sinksMeanColumn: 'Mean of its heads',
  sinksTopColumn: 'Heads most on the first token',
  sinksHead: 'head {head} · {share}',
  sinksOpen: 'Open layer {layer}, head {head} ({share} on the first token) in the matrix',
  sinksNoRows: 'One token: there is nothing to average yet.',
  layerHeadN: 'layer {layer}, head {head}',
  modelRegion:
    '{name} · queries {queries} × keys {keys} · strongest {weight}: “{query}” ({queryAt}) → ' +
    '“{key}” ({keyAt})',
  modelRegionMasked: '{name} · queries {queries} × keys {keys} · masked',
  legendOwnMax: 'each one’s largest weight',
  captionModel:
    'layer <b>{layer}</b> · head <b>{head}</b> of {heads} · <b>{n}</b> {unit} · mask ' +
    '<code>{mask}</code> · surgery <code>{surgery}</code>',
  captionModelBlock:
    'layer <b>{layer}</b> · head <b>{head}</b> of {heads} · the first sentence’s rows, the ' +
    'second’s columns (weights of the whole rows) · surgery <code>{surgery}</code>',
  // head labels (src/interpret/head-labels.js)
  'headLabel:previous': 'previous token',
  'headLabel:first': 'first-token sink',
  'headLabel:self': 'self',
  'headLabel:special': 'special tokens',
  'headLabel:broad': 'broad',
  headLabelNone: '—',
  'headLabelHint:previous': 'on average {value} of a row goes to the token just before it',
  'headLabelHint:first': 'on average {value} of a row goes to the first token',
  'headLabelHint:self': 'on average {value} of a row stays on the token itself',
  'headLabelHint:special': 'on average {value} of a row goes to {tokens}',
  'headLabelHint:broad': 'rows spread out: entropy {value} of the most it could be',
  headLabelNoneHint: 'no single pattern holds half of its attention',
  // head scores on the model's probe (src/interpret/head-scores.js, Model.headScores)
  'headLabel:induction': 'induction',
  'headLabel:previous-token': 'previous token',
  'headLabel:sink': 'sink',
  headProbeScores:
    'on random tokens repeated twice: induction {induction} (the token after the first ' +
    'occurrence), previous token {previous}, sink {sink} (first and special tokens)',
  headProbePending: 'scores on random tokens repeated twice: measuring…',
  headProbeFailed: 'scores on random tokens repeated twice: could not be measured ({message})',
  headOnText: 'on this text: {label}, {measure}',
  // predictions
  predictionsTitle: 'What the model predicts',
  predictionsNext: 'The next token after “{token}”:',
  predictionsMaskAt: '[MASK] at token {n}',
  predictionsNoMask:
    'Put {mask} in the text (the button under it) to see what the model would fill in.',
  predictionsNoHead: 'This checkpoint has no masked-LM head: it gives attention, no predictions.',
  predictionsOwn: 'with its own masks',
  predictionsSurgery: 'with {mask}',
  predictionChanged: 'The guess changes: {before} ({p}) becomes {after} ({q}).',
  predictionSame: 'The best guess stays {before} ({p} → {q}).',
  // the explain panel on a real head
  explainMetaModel: 'token {i} · layer {layer} · head {head} · d_k = {d}',
  explainModelWaiting: 'Opening up this layer…',
  stripeNoteModel:
    'Every query of this head gives {key} {mean} on average, against {w} here: {key} is a column ' +
    'stripe (a sink every query looks at), not a match for this query.',
  standoutNoteModel:
    'The other queries give {key} {mean} on average, against {w} here: this query picks it out.',
  explainModelTokensOnly:
    'Step by step works on the model’s own tokens and whole rows: turn off words and the ' +
    'sentence block to explain one.',
  step2ModelScaled:
    'This layer divides each score by √d_k = {root} (times {scale}) before the softmax, as ' +
    'the model was trained; there is no temperature.',
  step2ModelUnscaled:
    'GPT-Neo does not scale its scores: the softmax takes q·k as it is (scale 1).',
  step2ModelOther: 'This layer multiplies each score by {scale} before the softmax.',
  // exports
  exportSnapshot: 'Snapshot',
  footerRealModel:
    'With a real model, the weights are the checkpoint’s, run by attnlens’ own kernels in this ' +
    'tab; the files come from the Hugging Face Hub (or your disk) and stay in this browser’s ' +
    'cache. Nothing you type leaves the page.',
  // "Things to try" in a real model
  ideaPronounReal:
    'In a trained model: open distilgpt2 and look at token focus on “it”: the heads that ' +
    'send it to “animal” (or to “street”) are what a trained layer does.',
  ideaCrossReal:
    'In a trained model: multilingual BERT reads 我爱自然语言处理 and its translation as one ' +
    'pair; the block between the two sentences shows which words find each other.',
  openReal: 'Open in {model}',
  openRealNamed: '{title}: open in {model}',
  // <attn-lens> with a model or a snapshot
  widgetModelAbout: '{model}: {text}',
  // "Compare two models" (model/compare-panel.js, model/compare-columns.js)
  compareTitle: 'Two models side by side',
  compareOpen: 'Compare with a second model',
  compareIntro:
    'Pick a second model: the same text runs through both, and their heads, predictions and ' +
    'tokens show next to each other. What both take in memory shows before anything downloads.',
  compareSecondLabel: 'Second model',
  compareChoose: 'Choose…',
  compareFilesLabel: 'Or your own files',
  compareTrained: 'The model trained in “Watch it learn”, at step {steps}',
  compareTrainedName: 'Trained here (step {steps})',
  compareChecking: 'Checking what {name} would take…',
  compareMemory:
    '{first} holds {firstSize} of wasm memory; {second} would add {secondSize} (and {scratch} ' +
    'more while it loads): {total} together, of the {limit} the page lets its models take.',
  compareMemoryLoaded:
    '{first} holds {firstSize} of wasm memory and {second} {secondSize}: {total} together, of ' +
    'the {limit} the page lets its models take.',
  compareTooLarge:
    'Not loaded: together the two models would need {total}, more than the {limit} of wasm ' +
    'memory the page allows. Pick a smaller second model.',
  compareNotText:
    'Not loaded: {name} {reads}, so it cannot run on the page’s text beside it. Pick a model ' +
    'that reads text.',
  compareReadsPictures: 'reads pictures',
  compareTranslates: 'translates',
  compareLoad: 'Load {name} beside it ({size})',
  compareLoading: 'Loading {name}… {done}',
  compareRemove: 'Remove the second model',
  compareRunning: 'Running both models on the text…',
  compareOwnSettings:
    'Each model runs with its own tokenizer and masks, over its own tokens: mask surgery and ' +
    'words apply to the views above only. Choosing a head in one grid selects it in the other.',
  compareColumnTitle:
    '{name} · {type}, {layers} layers × {heads} heads, {parameters} parameters, {memory}',
  compareTokensLabel: 'Tokens of {name}',
  compareTokensDiffer:
    'The two tokenizers split this text differently: {first} reads {a} tokens, {second} {b}.',
  compareTokensSame: 'Both tokenizers split this text into the same {n} tokens.',
  compareHeadMissing: '{name} has no layer {layer}, head {head}.',
  comparePredictions: 'Predictions',
  // Picture mode (vision models: ViT, DINO, DINOv2)
  pictureTitle: 'Picture',
  pictureHint:
    'A vision transformer cuts the picture into square patches; the class token gathers them ' +
    'for the answer. See where each head looks.',
  pictureDrop: 'Drop a picture here, or choose a file',
  pictureSample: 'Sample picture',
  pictureCamera: 'Camera',
  pictureCameraStop: 'Stop camera',
  pictureTake: 'Take picture',
  pictureFollow: 'Follow the camera',
  pictureFollowStop: 'Stop following',
  pictureFollowing:
    'Following the camera: {fps} frames/s ({shown} frames shown, {dropped} dropped while one ran).',
  pictureRunning: 'Running the model on the picture…',
  pictureDone: '{width} × {height} pixels, seen as {rows} × {columns} patches.',
  pictureFailed: 'The picture did not run: {message}',
  pictureLayer: 'Layer',
  pictureHead: 'Head',
  pictureHeadMean: 'mean of heads',
  pictureHeadN: 'head {head}',
  pictureOpacity: 'Map opacity',
  pictureFocusClear: 'Back to the class token',
  pictureFocusHint:
    'Click a patch, or focus the picture and use the arrow keys, to see where that patch ' +
    'looks; Esc returns to the class token.',
  pictureFromClass: 'where the class token looks',
  pictureFromPatch: 'where the patch at row {row}, column {column} looks',
  pictureMainCaption: 'Layer {layer}, {who}: {from}.',
  pictureRollout: 'Rollout of the class token across all layers',
  pictureLastLayer: 'Last layer, raw attention (mean of heads)',
  pictureSurgeryTitle: 'Mask surgery',
  pictureSurgeryOn: 'Local window: each patch sees only its neighbours',
  pictureSurgeryWindow: 'Window',
  pictureSurgerySize: '{k} × {k} patches',
  pictureSurgeryHint:
    'In every layer, each patch attends only to the patches around it; the class token (and ' +
    'any registers) still sees, and is seen by, every patch. The maps above show the model ' +
    'under the window; here they are beside full attention. In layer 0 the class token sees ' +
    'the same patches either way: choose a later layer, or click a patch to see its window.',
  pictureSurgeryRunning: 'Running the picture again under the window…',
  pictureSurgeryFull: 'Full attention',
  pictureSurgeryMasked: '({k} × {k} window)',
  pictureSurgeryWindowed: '{k} × {k} local window',
  pictureSurgerySame: 'Top label unchanged under the {k} × {k} window: {label}.',
  pictureSurgeryChanged: 'Under the {k} × {k} window the top label changes: {before} → {after}.',
  pictureGridTitle: 'Every layer × head (class token)',
  pictureGridCell: 'Layer {layer}, head {head}',
  pictureDistanceTitle: 'Mean attention distance by layer',
  pictureDistanceHint:
    'Each dot is a head: the distance in input pixels over which it gathers, weighted by its ' +
    'attention between patches. Below {threshold} px (half of the {uniform} px that even ' +
    'attention gives) a head is local, otherwise global: {local} local, {global} global.',
  pictureDistanceAria: 'Mean attention distance of every head by layer; local below {threshold} px',
  pictureDistanceDot: 'Layer {layer}, head {head}: {px} px, {label}',
  pictureLocal: 'local',
  pictureGlobal: 'global',
  pictureLayerAxis: 'layer',
  pictureLabel: '{label}: {p}%',
  pictureExportPng: 'PNG',
  pictureExportJson: 'JSON',
  pictureExportSnapshot: 'Snapshot',
  pictureSnapshotShown:
    'Snapshot of {model} ({date}), drawn from the file with no model and no compute. It holds ' +
    'the class token’s maps: the patch focus and the distances need the model itself.',
  pictureSnapshotClose: 'Close the snapshot',
  pictureSnapshotFailed: 'The snapshot could not be opened: {message}',
  // the Translate mode (model/translate-panel.js)
  translateTitle: 'Translation, token by token',
  translateHint:
    'The model writes its translation one token at a time. Each new token looks back at the ' +
    'source through cross-attention: the alignment below grows with every token.',
  translateRun: 'Translate',
  translateStop: 'Stop',
  translateLayer: 'Decoder layer',
  translateHead: 'Head',
  translateAllLayers: 'all layers (mean)',
  translateAllHeads: 'all heads (mean)',
  translateAlignment: 'cross-attention alignment',
  translateMatrixCaption: 'Alignment: translation (rows) × source (columns)',
  translateLinesCaption: 'Lines: source above, translation below',
  translateSource: 'source',
  translateTarget: 'translation',
  translateIdle: 'Type a text to translate.',
  translateGoing: 'translating… {n} tokens so far',
  translateDone: '{n} tokens, done',
  translateDoneBeams: '{n} tokens, done: the best of {beams} beams',
  translateDecoding: 'Decoding',
  translateDecodeGreedy: 'greedy',
  translateDecodeBeams: 'beam search (the model’s num_beams)',
  translateStopped: 'stopped after {n} tokens',
  translateHeadsTitle: 'Which heads align',
  translateHeadsHint:
    'Each head’s share of attention on the source word a translated word comes from ' +
    '({pairs}); a head at {share} or more aligns.',
  translateHeadsNoDictionary:
    'This text has no dictionary of which word translates which, so no head is scored: ' +
    'pick a head to see its alignment.',
  translateShareTitle: 'share of attention on the source word: {share}',
  translateAligns: 'aligns',
  translateCrossMask: 'Cross-attention',
  translateMaskFull: 'full (as trained)',
  translateMaskLast: 'last source token only: one fixed vector',
  translateMaskMean: 'mean of the source',
  translateMaskLocal: 'local window (±2, Luong)',
  translateCompare: 'With full attention: {text}',
  // "Which heads matter" and "Logit lens" (model/heads-panel.js, model/lens-panel.js)
  headsMatterIntro:
    'Which heads does this prediction depend on? Each head is switched off in turn and the ' +
    'change in the target token’s log-probability measured. Click heads (or press Enter on ' +
    'them) to switch them off together and see the predictions change.',
  headsMatterOpen: 'Measure every head',
  headsTarget: 'Target token',
  headsTargetTop: 'the top prediction',
  headsMode: 'Switch off by',
  headsModeZero: 'zero (remove the head)',
  headsModeMean: 'mean (keep its average over the text)',
  headsClear: 'Switch all heads back on',
  headsMeasuring: 'Measuring the heads… {done} of {total}',
  headsMeasured: '{total} heads measured in {ms} ms.',
  headsCancelled: 'Cancelled: the heads were not all measured.',
  headsMeasureAgain: 'Measure again',
  headsFailed: 'Could not measure the heads: {message}',
  lensIntro:
    'When does the model know the answer? Every layer’s hidden state, read through the ' +
    'model’s own final norm and output layer (nostalgebraist’s logit lens). Hover or focus a ' +
    'cell for its top tokens.',
  logitLensOpen: 'Show what each layer predicts',
  lensRunning: 'Reading every layer…',
  lensFailed: 'Could not read the layers: {message}',
  translateLinesScroll: 'Scroll sideways for every token (or focus the lines and use the arrows).',
  // the Continue bar of causal models (model/continue-panel.js)
  continueTitle: 'Let the model write on',
  continueRun: 'Continue',
  continueStop: 'Stop',
  continueTokens: 'New tokens',
  continueTemperature: 'Temperature (0: greedy)',
  continueSeed: 'Seed',
  continueIdle:
    'Continue adds the model’s next tokens to the text one by one; each new row joins the views.',
  continueGoing: 'writing… {n} of {max} new tokens',
  continueDone: '{n} new tokens, kept in the text',
  continueEos: '{n} new tokens: the model ended the text (its end-of-text token)',
  continueStopped: 'stopped after {n} new tokens, kept in the text',
  continueNext: 'The next token’s predictions come once the continuation is kept in the text.',
};
