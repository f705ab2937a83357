// The demo's two languages. Static text in index.html carries data-i18n="key" (text) or
// data-i18n-attr="attribute:key;..." (attributes); everything built in JS asks t(key, values).
// Values fill {name} placeholders and are inserted as text, never as markup.

const STRINGS = {
  en: {
    skip: 'Skip to the visualisation',
    tagline:
      'Attention, computed live in this tab. Type, and watch every token decide where to look.',
    engineLoading: 'starting engine…',
    engineReady: '{backend} · {where}',
    engineError: 'engine failed',
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
    headN: 'head {n}',
    scoreLegend: 'Score function',
    scoreScaled: 'Scaled dot',
    scoreDot: 'Dot',
    scoreCosine: 'Cosine',
    scoreAdditive: 'Additive',
    narrowScoreCosine:
      'Cosine scores lie between −1 and 1, and at T = 1 softmax turns differences that small into almost equal weights: every row is close to uniform (see its entropy). A lower temperature magnifies the differences.',
    narrowScoreAdditive:
      'Additive scores span a narrow range too, a few units here, and at T = 1 softmax turns differences that small into almost equal weights: every row is close to uniform (see its entropy). A lower temperature magnifies the differences.',
    tryTemperature: 'Try T = {t}',
    temperatureLegend: 'Softmax temperature',
    temperature: 'Temperature T',
    sharp: 'sharper',
    flat: 'flatter',
    entropyColumn: 'H (bits)',
    entropyReadout:
      'Mean row entropy {mean} bits, from {min} to {max} (a uniform row over all {n} keys would be {uniform}).',
    maskLegend: 'Mask: who may look where',
    patternGlobal: 'Global',
    patternLocal: 'Local window',
    patternDilated: 'Dilated',
    patternStrided: 'Strided sparse',
    patternFixed: 'Fixed sparse',
    causal: 'Causal: no peeking at later tokens',
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
    linkCopied: 'Link copied',
    linkInAddressBar: 'The address bar holds the link',
    headsHint:
      'Each head has its own query, key and value projections, so each finds its own pattern. Pick one to enlarge it.',
    maskedLegend: 'masked: not allowed to look',
    maskedWord: 'masked',
    keyboardHelp: 'Arrow keys move over cells · Enter explains a row · +/− zoom',
    explainTitle: 'Step by step: one query',
    costTitle: 'What it costs',
    primerTitle: 'Things to try',
    footerModel:
      'The vectors here come from hashed character n-grams plus sinusoidal positions, projected by seeded random (untrained) weights. The patterns show how attention computes, not what a trained model has learned.',
    footerOffline:
      'Nothing leaves this page: no fonts, scripts or trackers from elsewhere; it keeps working offline once loaded.',
    footerWidget: 'Embed it in a post →',
    heatmapLabel:
      'Attention heatmap: rows are queries, columns are keys. Arrow keys move, Enter explains the row.',
    heatmapRole: 'heatmap',
    linesLabel: 'Line view: queries on one side, keys on the other, line width is the weight',
    queries: 'queries',
    keys: 'keys',
    sourceKeys: 'source (keys)',
    targetQueries: 'target (queries)',
    tableCaption:
      'Attention weights of head {head}: each row is a query token, each column a key token; each row sums to 1.',
    tableCorner: 'query \\ key',
    tablePartial: 'Only query {n} is listed here; the Numbers view holds every row.',
    captionSelf:
      '<b>{n}</b> tokens · head <b>{head}</b> of {heads} · {score} · T = {t} · mask <code>{mask}</code>',
    captionCross:
      '<b>{nt}</b> target × <b>{ns}</b> source tokens · head <b>{head}</b> of {heads} · {score} · T = {t}',
    maskCaption: 'mask',
    tokensCount: '{n} tokens',
    tokensCountCross: 'target {nt} · source {ns} tokens',
    clickTokenHint: 'click a token to explain it',
    emptyText: 'Type something above to see its attention.',
    computing: 'computing…',
    errorPrefix: 'Cannot compute: {message}',
    // explain panel
    explainPick:
      'Pick a query: click a row of the matrix, a token above, or press Enter on a heatmap cell.',
    explainQuery: 'query',
    explainMeta: 'token {i} · head {head} · d_k = {d} · {score} · T = {t}',
    step1Title: 'Score every key',
    step1Dot:
      'The query vector is compared with each key vector by a dot product: large when they point the same way.',
    step1Cosine:
      'Cosine similarity: the dot product of the unit vectors, always between −1 and 1, blind to length.',
    step1Additive:
      'Additive (Bahdanau) score: a small learned network v·tanh(W_q q + W_k k) rates each pair.',
    step1Vectors: 'first {n} of {d} dimensions; the selected key is {key}',
    step1Sum: 'q · k = Σ q_d k_d = {value}',
    step2Title: 'Scale and temperature',
    step2Scaled:
      'Divide by √d_k = {root} so the scores do not grow with the vector size, then by T = {t}.',
    step2Plain: 'This score is not scaled (scale 1); only the temperature T = {t} divides it.',
    step3Title: 'Mask',
    step3None: 'Nothing is masked: this query may look at all {n} keys.',
    step3Some:
      '{hidden} of {n} keys are masked: their logit becomes −∞, so softmax gives them exactly 0.',
    step4Title: 'Softmax',
    step4Text:
      'Exponentiate and normalise: w_j = exp(x_j) / Σ exp(x). The weights are positive and sum to {sum}. Entropy {h} bits.',
    step5Title: 'Weighted sum of values',
    step5Text:
      'The output for this query mixes the value vectors by those weights: z = Σ w_j v_j. Biggest contributions: {top}.',
    colKey: 'key',
    colScore: 'q·k',
    colLogit: 'logit',
    colWeight: 'weight',
    maskedCell: 'masked',
    showAll: 'Show all {n} keys',
    showTop: 'Show the top {n}',
    // cost panel
    costIntro:
      'A materialized kernel keeps every score of every head: N² numbers. The streaming (Flash-style) kernel walks key tiles with an online softmax and keeps only O(N) state.',
    costMaterialized: 'Full weight matrix (materialized)',
    costStreaming: 'Tiled streaming kernel',
    costShape: 'N = {n} tokens, {heads} heads, d = {d}',
    costChart:
      'Working memory as N grows (log-log): {ratio}× apart at N = {n}, the longest whose full matrix fits wasm32 memory.',
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
    benchMaterialized: 'materialized',
    benchStreaming: 'streaming',
    // ideas
    ideaPronounTitle: 'Who is "it"?',
    ideaPronounText:
      'Explain the row of "it": which earlier words does it draw from, and how does that change per head?',
    ideaScaleTitle: 'Why divide by √d_k',
    ideaScaleText:
      'Switch between plain dot and scaled dot. Without the scaling, the rows get much sharper: softmax saturates.',
    ideaTempTitle: 'Temperature',
    ideaTempText:
      'Slide T down to 0.2 and each row collapses onto its best key; up to 5 and it spreads evenly. Watch the entropy column.',
    ideaCausalTitle: 'Causal mask',
    ideaCausalText:
      'A decoder must not read the future: the upper triangle turns into hatching and each row renormalises over the past.',
    ideaLocalTitle: 'Global versus local',
    ideaLocalText:
      'A local window keeps a band around the diagonal, Longformer-style. Compare it side by side with full attention.',
    ideaSparseTitle: 'Sparse patterns',
    ideaSparseText:
      'Strided attention keeps nearby keys plus every S-th one; with a global token one position talks to all.',
    ideaCrossTitle: 'Cross-attention and alignment',
    ideaCrossText:
      'Queries from one text, keys and values from another: the matrix becomes an alignment between a sentence and its translation.',
    ideaHeadsTitle: 'Many heads',
    ideaHeadsText:
      'Eight heads look at the same tokens through eight projections. Open the Heads view to compare their patterns.',
    tryIt: 'Try it',
    exampleEnglish: 'English: who is “it”?',
    exampleChinese: '中文 sentence',
    exampleLong: 'Long Chinese run',
    exampleCross: 'Translation pair',
  },
  zh: {
    skip: '跳到可视化区域',
    tagline: '注意力就在这个标签页里实时计算。输入文字，看每个词元把目光投向哪里。',
    engineLoading: '正在启动引擎…',
    engineReady: '{backend} · {where}',
    engineError: '引擎启动失败',
    backendLabel: '计算后端',
    backendAuto: '自动',
    backendWasm: 'WebAssembly',
    backendWebgpu: 'WebGPU',
    backendWebgpuSoftware: 'WebGPU（软件模拟）',
    inputTitle: '你的文本',
    mode: '模式',
    modeSelf: '自注意力',
    modeCross: '交叉注意力',
    examples: '示例',
    sourceLabel: '源文本',
    sourceHint: '提供键和值：被看的一方',
    textLabel: '文本',
    textHint: '每个词元同时充当查询、键和值',
    targetLabel: '目标文本',
    targetHint: '提供查询：发起“看”的一方',
    controls: '设置',
    headsLegend: '注意力头',
    headsCount: '头的数量',
    headShown: '当前显示的头',
    headN: '第 {n} 个头',
    scoreLegend: '打分函数',
    scoreScaled: '缩放点积',
    scoreDot: '点积',
    scoreCosine: '余弦',
    scoreAdditive: '加性',
    narrowScoreCosine:
      '余弦分数只在 −1 到 1 之间。T = 1 时，softmax 把这么小的差别变成几乎相等的权重：每一行都接近均匀分布（看它的熵）。调低温度可以放大这些差别。',
    narrowScoreAdditive:
      '加性分数的范围也很窄，这里只差几个单位。T = 1 时，softmax 把这么小的差别变成几乎相等的权重：每一行都接近均匀分布（看它的熵）。调低温度可以放大这些差别。',
    tryTemperature: '试试 T = {t}',
    temperatureLegend: 'Softmax 温度',
    temperature: '温度 T',
    sharp: '更集中',
    flat: '更平均',
    entropyColumn: '熵（比特）',
    entropyReadout:
      '每行平均熵 {mean} 比特，范围 {min} 到 {max}（若在全部 {n} 个键上均匀分布则为 {uniform}）。',
    maskLegend: '掩码：谁能看向哪里',
    patternGlobal: '全局',
    patternLocal: '局部窗口',
    patternDilated: '空洞窗口',
    patternStrided: '跨步稀疏',
    patternFixed: '固定块稀疏',
    causal: '因果：不许偷看后面的词元',
    window: '窗口（单侧宽度）',
    dilation: '空洞间隔',
    stride: '步长',
    summary: '每块的汇总位置数',
    globalTokens: '全局词元：能看所有人，也被所有人看',
    notation: '记法',
    compareLegend: '并排比较两种掩码',
    compareWith: '与之并排对比',
    compareOff: '— 关闭 —',
    splitInto: '切分为',
    word: '按词',
    char: '按字',
    subword: '子词',
    colourLegend: '配色',
    colourScale: '色阶',
    colourRange: '颜色范围',
    rangeMax: '0 – 最大值',
    rangeUnit: '0 – 1',
    stageTitle: '注意力权重',
    view: '视图',
    viewMatrix: '矩阵',
    viewLines: '连线',
    viewHeads: '多头',
    viewNumbers: '数值',
    tools: '视图工具',
    zoomOut: '缩小',
    zoomFit: '适应宽度',
    zoomIn: '放大',
    layout: '布局',
    layoutAuto: '自动布局',
    layoutVertical: '左右两列',
    layoutHorizontal: '上下两行',
    exportPng: 'PNG',
    exportSvg: 'SVG',
    exportJson: 'JSON',
    copyLink: '复制链接',
    linkCopied: '链接已复制',
    linkInAddressBar: '地址栏里就是当前视图的链接',
    headsHint: '每个头都有自己的查询、键、值投影，因此会形成各自的模式。点击任意一个放大查看。',
    maskedLegend: '被掩码：不允许看',
    maskedWord: '已掩码',
    keyboardHelp: '方向键在格子间移动 · 回车讲解该行 · +/− 缩放',
    explainTitle: '逐步拆解：一个查询',
    costTitle: '计算代价',
    primerTitle: '动手试试',
    footerModel:
      '这里的向量由字符 n-gram 哈希加正弦位置编码得到，再经过按种子生成、未经训练的随机权重投影。图案展示的是注意力怎样计算，而不是训练好的模型学到了什么。',
    footerOffline: '页面不向外发送任何数据：不加载外部字体、脚本或统计代码；加载一次后离线也能用。',
    footerWidget: '嵌入到你的文章 →',
    heatmapLabel: '注意力热力图：行是查询，列是键。方向键移动，回车讲解该行。',
    heatmapRole: '热力图',
    linesLabel: '连线视图：一侧是查询，另一侧是键，线越粗权重越大',
    queries: '查询',
    keys: '键',
    sourceKeys: '源文本（键）',
    targetQueries: '目标文本（查询）',
    tableCaption:
      '第 {head} 个头的注意力权重：每行是一个查询词元，每列是一个键词元；每行之和为 1。',
    tableCorner: '查询 \\ 键',
    tablePartial: '这里只列出第 {n} 个查询；“数值”视图里有全部行。',
    captionSelf:
      '<b>{n}</b> 个词元 · 第 <b>{head}</b> 个头（共 {heads} 个）· {score} · T = {t} · 掩码 <code>{mask}</code>',
    captionCross:
      '目标 <b>{nt}</b> × 源 <b>{ns}</b> 个词元 · 第 <b>{head}</b> 个头（共 {heads} 个）· {score} · T = {t}',
    maskCaption: '掩码',
    tokensCount: '{n} 个词元',
    tokensCountCross: '目标 {nt} 个 · 源 {ns} 个词元',
    clickTokenHint: '点击词元查看讲解',
    emptyText: '在上方输入文字，即可看到它的注意力。',
    computing: '计算中…',
    errorPrefix: '无法计算：{message}',
    explainPick: '选择一个查询：点击矩阵中的一行、上方的词元，或在热力图格子上按回车。',
    explainQuery: '查询',
    explainMeta: '第 {i} 个词元 · 第 {head} 个头 · d_k = {d} · {score} · T = {t}',
    step1Title: '给每个键打分',
    step1Dot: '用点积比较查询向量和每个键向量：方向越一致，分数越高。',
    step1Cosine: '余弦相似度：单位向量的点积，总在 −1 到 1 之间，与向量长度无关。',
    step1Additive: '加性（Bahdanau）打分：用一个小网络 v·tanh(W_q q + W_k k) 为每一对打分。',
    step1Vectors: '显示 {d} 维中的前 {n} 维；选中的键是 {key}',
    step1Sum: 'q · k = Σ q_d k_d = {value}',
    step2Title: '缩放与温度',
    step2Scaled: '先除以 √d_k = {root}，让分数不随向量维度变大而膨胀，再除以温度 T = {t}。',
    step2Plain: '这种打分不做缩放（比例为 1），只除以温度 T = {t}。',
    step3Title: '掩码',
    step3None: '没有掩码：这个查询可以看全部 {n} 个键。',
    step3Some: '{n} 个键中有 {hidden} 个被掩码：它们的 logit 变成 −∞，softmax 后权重恰好为 0。',
    step4Title: 'Softmax 归一化',
    step4Text: '取指数再归一：w_j = exp(x_j) / Σ exp(x)。权重都为正，总和为 {sum}。熵为 {h} 比特。',
    step5Title: '对值加权求和',
    step5Text: '这个查询的输出按权重混合各个值向量：z = Σ w_j v_j。贡献最大的是：{top}。',
    colKey: '键',
    colScore: 'q·k',
    colLogit: 'logit',
    colWeight: '权重',
    maskedCell: '已掩码',
    showAll: '显示全部 {n} 个键',
    showTop: '只显示前 {n} 个',
    costIntro:
      '物化（materialized）内核要保存每个头的全部分数：N² 个数。流式（Flash 风格）内核按键的分块遍历，用在线 softmax，只保留 O(N) 的状态。',
    costMaterialized: '完整权重矩阵（物化）',
    costStreaming: '分块流式内核',
    costShape: 'N = {n} 个词元，{heads} 个头，d = {d}',
    costChart:
      '工作内存随 N 的增长（双对数坐标）：N = {n} 时相差 {ratio} 倍，这是完整矩阵还能放进 wasm32 内存的最大长度。',
    kernelTime: '上次运行：内核',
    totalTime: '上次运行：全部',
    totalTimeParts: '分词、嵌入、内核、掩码',
    coldRun: '首次调用：含内核编译时间',
    backend: '后端',
    thread: '计算线程',
    runtime: '{ms} 毫秒',
    benchButton: '在 N = {n} 下实测',
    benchRunning: '测量中…',
    benchExplain: '在这个长度下用随机 Q/K/V、你当前的掩码和头数，两种策略各取 3 次中的最快值。',
    benchStrategy: '策略',
    benchTime: '耗时',
    benchMemory: '内存',
    benchTiles: '计算的分块',
    benchMaterialized: '物化',
    benchStreaming: '流式',
    ideaPronounTitle: '“it” 指的是谁？',
    ideaPronounText: '讲解 “it” 这一行：它从前面哪些词取信息？不同的头有什么不同？',
    ideaScaleTitle: '为什么要除以 √d_k',
    ideaScaleText: '在普通点积与缩放点积之间切换。不缩放时每一行都尖锐得多：softmax 进入饱和区。',
    ideaTempTitle: '温度',
    ideaTempText: '把 T 拉到 0.2，每行几乎只剩最高分的键；拉到 5，权重趋于平均。留意右侧的熵。',
    ideaCausalTitle: '因果掩码',
    ideaCausalText: '解码器不能读到未来：上三角变成斜线阴影，每一行只在过去的词元上重新归一。',
    ideaLocalTitle: '全局与局部',
    ideaLocalText:
      '局部窗口只保留对角线附近的一条带（Longformer 的做法）。和全局注意力并排比一比。',
    ideaSparseTitle: '稀疏模式',
    ideaSparseText:
      '跨步注意力保留邻近的键和每隔 S 个的键；再加一个全局词元，它就能和所有位置互通。',
    ideaCrossTitle: '交叉注意力与对齐',
    ideaCrossText: '查询来自一段文本，键和值来自另一段：矩阵就成了句子与译文之间的对齐图。',
    ideaHeadsTitle: '多个头',
    ideaHeadsText: '八个头通过八组投影看同一串词元。打开“多头”视图比较它们的模式。',
    tryIt: '试一试',
    exampleEnglish: 'English: who is “it”?',
    exampleChinese: '中文句子',
    exampleLong: '长中文句',
    exampleCross: '中英对照',
  },
};

const SCORE_NAMES = {
  en: { 'scaled-dot': 'scaled dot', dot: 'dot', cosine: 'cosine', additive: 'additive' },
  zh: { 'scaled-dot': '缩放点积', dot: '点积', cosine: '余弦', additive: '加性' },
};

let current = 'en';

export function detectLanguage() {
  const preferred = (typeof navigator !== 'undefined' && navigator.languages) || [];
  return preferred.some((l) => /^zh\b/i.test(l)) ? 'zh' : 'en';
}

export function setLanguage(lang) {
  current = STRINGS[lang] ? lang : 'en';
  return current;
}

export function language() {
  return current;
}

export function t(key, values = {}) {
  const template = STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (match, name) =>
    name in values ? String(values[name]) : match,
  );
}

export function scoreName(score) {
  return SCORE_NAMES[current][score] ?? score;
}

// Builds nodes from a template whose values are text and whose only markup is <b> and <code>
// written in this file (never in values): values are inserted as text nodes.
export function tNodes(key, values = {}) {
  const template = STRINGS[current][key] ?? STRINGS.en[key] ?? key;
  const fragment = document.createDocumentFragment();
  const pattern = /<(b|code)>(.*?)<\/\1>|\{(\w+)\}|([^<{]+|[<{])/g;
  for (const match of template.matchAll(pattern)) {
    if (match[1]) {
      const inner = document.createElement(match[1]);
      inner.textContent = match[2].replace(/\{(\w+)\}/g, (m, name) =>
        name in values ? String(values[name]) : m,
      );
      fragment.append(inner);
    } else if (match[3]) {
      fragment.append(
        document.createTextNode(match[3] in values ? String(values[match[3]]) : match[0]),
      );
    } else {
      fragment.append(document.createTextNode(match[4]));
    }
  }
  return fragment;
}

// Applies the current language to static markup under `root`.
export function translateDocument(root = document) {
  document.documentElement.lang = current === 'zh' ? 'zh-Hans' : 'en';
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll('[data-i18n-attr]')) {
    for (const pair of node.dataset.i18nAttr.split(';')) {
      const [attribute, key] = pair.split(':');
      node.setAttribute(attribute, t(key));
    }
  }
}
