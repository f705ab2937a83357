// Simplified Chinese strings of the demo page: the keys and {name} placeholders of
// strings/en.js (test/i18n.test.js checks it).
export const zh = {
  skip: '跳到可视化区域',
  tagline: '注意力就在这个标签页里实时计算。输入文字，看每个词元把目光投向哪里。',
  engineLoading: '正在启动引擎…',
  engineReady: '{backend} · {where}',
  engineError: '引擎启动失败',
  whereWorker: '后台线程',
  whereMainThread: '主线程',
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
  headsCountN: '{n} 个头',
  headDim: '每个头的维度 d_k',
  modelDimReadout: 'd_model = 头数 × d_k = {heads} × {dk} = {model}',
  scoreLegend: '打分函数',
  scoreScaled: '缩放点积',
  scoreDot: '点积',
  scoreCosine: '余弦',
  scoreAdditive: '加性',
  narrowScoreCosine:
    '余弦分数只在 −1 到 1 之间。T = 1 时，softmax 把这么小的差别变成几乎相等的权重：' +
    '每一行都接近均匀分布（看它的熵）。调低温度可以放大这些差别。',
  narrowScoreAdditive:
    '加性分数的范围也很窄，这里只差几个单位。T = 1 时，softmax 把这么小的差别变成几乎相等的权重：' +
    '每一行都接近均匀分布（看它的熵）。调低温度可以放大这些差别。',
  tryTemperature: '试试 T = {t}',
  temperatureLegend: 'Softmax 温度',
  temperature: '温度 T',
  sharp: '更集中',
  flat: '更平均',
  entropyReadout:
    '每行平均熵 {mean} 比特，范围 {min} 到 {max}（若在全部 {n} 个键上均匀分布则为 {uniform}）。',
  maskLegend: '掩码：谁能看向哪里',
  patternGlobal: '全局',
  patternLocal: '局部窗口',
  patternDilated: '空洞窗口',
  patternStrided: '跨步稀疏',
  patternFixed: '固定块稀疏',
  patternAlign: '对齐窗口',
  crossMaskNote:
    '目标文本和源文本是两段不同的文字：位置掩码（因果、局部、稀疏、全局词元）' +
    '会拿一段里的位置去比另一段里的位置，' +
    '因此这里不提供。对齐窗口让目标词元 i 只看源文本中靠近其对应位置 i·(Ns−1)/(Nt−1) 的键，' +
    '即单调对齐；' +
    '填充则让某些源键对所有查询都不可见。',
  paddedKeys: '填充：任何查询都不能看的源键',
  causal: '因果：不许偷看后面的词元',
  topKSwitch: 'Top-k：每个查询只保留得分最高的 k 个键',
  topK: '每个查询保留的键数（k）',
  lshSwitch: '哈希分桶（LSH）：查询只看与它落进同一个桶的键',
  buckets: '哈希桶数',
  rounds: '哈希轮数（任一轮同桶即可见）',
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
  subword: '按子词',
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
  reset: '重置',
  resetHint: '所有设置恢复默认（语言和配色保持不变）',
  linkCopied: '链接已复制',
  linkInAddressBar: '地址栏里就是当前视图的链接',
  headsHint: '每个头都有自己的查询、键、值投影，因此会形成各自的模式。点击任意一个放大查看。',
  maskedLegend: '被掩码：不允许看',
  maskedLegendSelection: '斜线：被掩码，或被 top-k／哈希舍弃',
  keyboardHelp: '方向键在格子间移动 · 回车讲解该行 · +/− 缩放',
  explainTitle: '逐步拆解：一个查询',
  costTitle: '计算代价',
  primerTitle: '动手试试',
  footerModel:
    '这里的向量由字符 n-gram 哈希加正弦位置编码得到，再经过按种子生成、未经训练的随机权重投影。' +
    '图案展示的是注意力怎样计算，而不是训练好的模型学到了什么。',
  footerOffline: '页面不向外发送任何数据：不加载外部字体、脚本或统计代码；加载一次后离线也能用。',
  footerWidget: '嵌入到你的文章 →',
  heatmapLabel: '注意力热力图：行是查询，列是键。方向键移动，回车讲解该行。',
  heatmapLabelMask: '使用掩码 {mask} 的注意力热力图：行是查询，列是键。方向键移动，回车讲解该行。',
  columnMeanRow: '键均值',
  linesLabel: '连线视图：一侧是查询，另一侧是键，线越粗权重越大',
  linesLegend: '线的粗细和颜色：权重',
  sourceKeys: '源文本（键）',
  targetQueries: '目标文本（查询）',
  tableCaption: '第 {head} 个头的注意力权重：每行是一个查询词元，每列是一个键词元；每行之和为 1。',
  tablePartial: '这里只列出第 {n} 个查询；“数值”视图里有全部行。',
  tableRegion: '注意力权重（数值）',
  captionSelf:
    '<b>{n}</b> 个词元 · 第 <b>{head}</b> 个头（共 {heads} 个）· {score} · T = {t} · 掩码 ' +
    '<code>{mask}</code>',
  captionCross:
    '目标 <b>{nt}</b> × 源 <b>{ns}</b> 个词元 · 第 <b>{head}</b> 个头（共 {heads} 个）· {score} ' +
    '· T = {t} · 掩码 <code>{mask}</code>',
  maskCaption: '掩码',
  tokensCountCross: '目标 {nt} 个 · 源 {ns} 个词元',
  clickTokenHint: '点击词元查看讲解',
  emptyText: '在上方输入文字，即可看到它的注意力。',
  computing: '计算中…',
  errorPrefix: '无法计算：{message}',
  linkProblem: '链接中的 {param}={value} 无法使用，已改用默认值。',
  // explain panel
  explainPick: '选择一个查询：点击矩阵中的一行、上方的词元，或在热力图格子上按回车。',
  explainQuery: '查询',
  explainMeta: '第 {i} 个词元 · 第 {head} 个头 · d_k = {d} · {score} · T = {t}',
  step1Title: '给每个键打分',
  step1Dot: '用点积比较查询向量和每个键向量：方向越一致，分数越高。',
  step1Cosine: '余弦相似度：单位向量的点积，总在 −1 到 1 之间，与向量长度无关。',
  step1Additive: '加性（Bahdanau）打分：用一个小网络 v·tanh(W_q q + W_k k) 为每一对打分。',
  step1Vectors: '显示 {d} 维中的前 {n} 维；选中的键是 {key}',
  step1VectorsAll: '显示全部 {d} 维；选中的键是 {key}',
  step1Sum: 'q · k = Σ q_d k_d = {value}',
  step2Title: '缩放与温度',
  step2Scaled: '先除以 √d_k = {root}，让分数不随向量维度变大而膨胀，再除以温度 T = {t}。',
  step2Plain: '这种打分不做缩放（缩放系数为 1），只除以温度 T = {t}。',
  spreadMeasuring: '正在测量各个 d_k 下 q·k 的离散程度…',
  spreadCaption:
    '这段文本（最多取前 {tokens} 个词元）在当前头数下、各个头维度 d_k 的原始分数 q·k ' +
    '的离散程度（标准差）',
  spreadRaw: 'σ(q·k)',
  spreadScaled: 'σ(q·k)/√d_k',
  spreadText:
    '不缩放时，离散程度大约随 √d_k 增长：头越宽，softmax 看到的差别越大，就会饱和到一个键上。' +
    '除以 √d_k 后，各个维度下都差不多。',
  step3Title: '掩码',
  step3None: '没有掩码：这个查询可以看全部 {n} 个键。',
  step3Some: '{n} 个键中有 {hidden} 个被掩码：它们的 logit 变成 −∞，softmax 后权重恰好为 0。',
  step3Empty: '全部 {n} 个键都被掩码：这个查询什么也看不到，所有 logit 都变成 −∞。',
  step3KeyVisible: '{key} 可见：x({key}) = {x} 保持不变',
  step3KeyMasked: '{key} 被掩码：x({key}) = {x} 变成 −∞',
  selectLsh:
    '哈希（LSH，{buckets} 个桶，{rounds} 轮）把这个查询放进桶 {bucket}（每轮一个）。' +
    '{n} 个可见键中有 {same} 个至少在一轮里与它同桶，保留下来；' +
    '其余 {out} 个被舍弃：logit 变成 −∞。',
  selectLshKeyIn: '{key} 在桶 {bucket}：与查询同桶，保留',
  selectLshKeyOut: '{key} 在桶 {bucket}：没有一轮与查询同桶，它的 x 变成 −∞',
  selectTopK:
    'Top-k 在仍保留的 {n} 个键中只留 logit 最大的 {k} 个；留下的最低一个是 x({kth}) = {xk}。其余 ' +
    '{out} 个被舍弃：logit 变成 −∞（logit 相同时留前面的键）。',
  selectTopKAll: 'Top-k 最多保留 {k} 个键；现在只剩 {n} 个，全部保留。',
  selectTopKKeyIn: 'x({key}) = {x} ≥ x({kth}) = {xk}：{key} 在保留的 {k} 个之中',
  selectTopKKeyOut:
    'x({key}) = {x} 不在最大的 {k} 个之中（留下的最低为 {xk}）：{key} 被舍弃，logit 变成 −∞',
  selectGlobal:
    '全局 token 属于掩码，而掩码先起作用：全局查询可以看所有键，全局键可以被所有查询看到；' +
    '但 top-k 和哈希随后照常在这些键中挑选，所以全局 token 也可能被舍弃。',
  step4Title: 'Softmax 归一化',
  step4Text: '取指数再归一化：w_j = exp(x_j) / Σ exp(x)。权重都为正，总和为 {sum}。熵为 {h} 比特。',
  step4Kept:
    '求和 Σ′ 只覆盖留下的 {n} 个键，而不是全部 {visible} 个可见键：' +
    '每个被舍弃的键贡献 exp(−∞) = 0。',
  step4NoneLeft:
    '哈希没有给这个查询留下任何键：没有可归一化的东西，所有权重都是 0' +
    '（总和为 0，而不是 1），引擎这样定义。',
  step4Empty:
    '没有可见的键，也就没有可归一化的东西：所有权重都是 0（总和为 0，而不是 1）。引擎这样定义，' +
    '以免除以零。',
  step5Title: '对值加权求和',
  step5Text: '这个查询的输出按权重混合各个值向量：z = Σ w_j v_j。贡献最大的是：{top}。',
  step5Empty: '没有可见的键，因此按定义，这个查询的输出 z 是零向量。',
  step5NoneLeft: '没有留下任何键，因此按定义，这个查询的输出 z 是零向量。',
  stripeNote:
    '这个头的所有查询平均给 {key} {mean}，这里是 {w}：{key} ' +
    '是一条列条纹（所有查询都看的“汇点”），' +
    '并不是与这个查询的匹配。这一层没有经过训练。',
  standoutNote:
    '其他查询平均只给 {key} {mean}，这里是 {w}：这个查询确实突出地选中了它' +
    '（在未训练的层里，靠的是随机投影，而不是词义）。',
  colKey: '键',
  colScore: 'q·k',
  colScoreCosine: 'cos(q,k)',
  colScoreAdditive: '分数',
  colMean: '键均值',
  colMeanHint: '所有能看到这个键的查询给它的平均权重（列条纹）',
  keyTableCaption: '这个查询的每个键：原始分数、logit、权重和键均值',
  colLogit: 'logit',
  colBucket: '桶',
  colBucketHint: '这个键在每一轮的哈希桶（LSH）：有一轮与查询相同就保留',
  colWeight: '权重',
  maskedCell: '已掩码',
  showAll: '显示全部 {n} 个键',
  showTop: '只显示前 {n} 个',
  // cost panel
  costIntro:
    '显式存储完整矩阵的内核在 softmax 之前写出一个头的 N² 个分数，一次处理一个头：' +
    '下面的内存就是这个 N×N 矩阵。' +
    '流式（Flash 风格）内核沿键（K）序列逐块遍历，用在线 softmax，只保留 O(N) 的状态。',
  costMaterialized: '完整权重矩阵（显式存储）',
  costStreaming: '分块流式内核',
  costShape: 'N = {n} 个词元，{heads} 个头，d = {d}',
  costChart:
    '工作内存随 N 的增长（双对数坐标）：N = {n} 时相差 {ratio} 倍，这是完整矩阵还能放进 wasm32 ' +
    '内存的最大长度。',
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
  benchTiles: '已计算的分块',
  costSelection:
    'Top-k 与哈希在所有头上保留了掩码允许的 {visible} 个（查询，键）对中的 {kept} 个' +
    '（{share}% 被舍弃）：舍弃的对已经算过得分，只是不进入 softmax 和值的加权和。',
  benchScores: '已计算的得分',
  benchSelectionNote:
    'Top-k 与哈希按得分或哈希挑选键，所以掩码允许的每个键都要先算得分（top-k 时流式内核算两遍：' +
    '一遍挑选，一遍注意）。它们省下的是被舍弃键上的 softmax 与加权和，而不是打分。',
  benchMaterialized: '显式存储完整矩阵',
  benchStreaming: '流式',
  benchSkipped:
    '掩码让 {total} 个键分块中的 {skipped} 个对其查询不可见（{share}%）：流式内核跳过了它们。',
  benchNoSkipGlobal:
    '流式内核计算了全部 {total} 个分块：没有掩码时，每个查询都需要每个键。这里省下的是内存，' +
    '不是计算量。',
  benchNoSkipScattered:
    '流式内核计算了全部 {total} 个分块：这种掩码保留的键分散在整行上，' +
    '每个分块里都有某个查询能看的键，' +
    '所以一个也跳不过。这里省下的是内存，不是计算量。',
  benchNoSkipShort:
    '流式内核计算了全部 {total} 个分块：在这个长度下，掩码没有让任何一整块键对一组查询不可见。',
  // ideas
  ideaPronounTitle: '“it” 指的是谁？',
  ideaPronounText:
    '这一层没有经过训练，没有哪个头知道 “it” 指的是什么。讲解 “it” 这一行，把每个权重和它的键均值' +
    '（矩阵下方的条带）对照：如果一个头的所有查询给 “animal” 的都差不多，那是一条列条纹（汇点）' +
    '，不是匹配。',
  ideaScaleTitle: '为什么要除以 √d_k',
  ideaScaleText:
    'd_k = 64 时的普通点积：每个分数是 64 个乘积之和，原始分数的离散程度大约是单个乘积的 √64 = ' +
    '8 倍，' +
    'softmax 饱和到每行一个键上。讲解的第 2 步列出了各个 d_k 下的离散程度；缩放点积除以 √d_k，' +
    '让各行恢复正常。',
  ideaTempTitle: '温度',
  ideaTempText: '把 T 拉到 0.2，每行几乎只剩最高分的键；拉到 5，权重趋于平均。留意右侧的熵。',
  ideaCausalTitle: '因果掩码',
  ideaCausalText: '解码器不能读到未来：上三角变成斜线阴影，每一行只在过去的词元上重新归一化。',
  ideaLocalTitle: '全局与局部',
  ideaLocalText: '局部窗口只保留对角线附近的一条带（Longformer 的做法）。和全局注意力并排比一比。',
  ideaSparseTitle: '稀疏模式',
  ideaSparseText:
    '跨步注意力保留邻近的键，再每隔 S 个位置取一个键；再加一个全局词元，它就能和所有位置互通。',
  ideaCrossTitle: '交叉注意力与对齐',
  ideaCrossText:
    '查询来自一段文本，键和值来自另一段。这一层没有经过训练，两句话也没有共同的字母，' +
    '所以没有哪个头把它们对齐：' +
    '显眼的是列条纹，即所有查询都偏爱的键。先把每个权重和它的键均值对照，再去读“匹配”。',
  ideaHeadsTitle: '多个头',
  ideaHeadsText: '八个头通过八组投影看同一串词元。打开“多头”视图比较它们的模式。',
  tryIt: '试一试',
  tryItNamed: '试一试：{title}',
  exampleEnglish: '英文：“it” 指的是谁？',
  exampleChinese: '中文句子',
  exampleLong: '长中文句',
  exampleCross: '中英对照',
  // watch it learn
  learnTitle: '看它学习',
  learnIntro:
    '一个很小的 Transformer 就在这个标签页里、用同样的内核训练。起初它的注意力很分散；' +
    '随着学习，各个头逐渐聚焦，有的还找到了分工：看前一个词元，' +
    '或者看这个词元上次出现时紧跟其后的那个词元（归纳头）。',
  learnCorpus: '学习材料',
  learnCorpusRandom: '重复的随机序列',
  learnCorpusEnglish: '英文样例',
  learnCorpusChinese: '中文样例',
  learnCorpusOwn: '你的文本',
  learnOwnLabel: '用来学习的文本',
  learnFalling: '降温：前 1000 步温度从 4 降到 1',
  learnTrain: '训练',
  learnPause: '暂停',
  learnResume: '继续',
  learnStep: '单步',
  learnReset: '重新开始',
  learnIdle: '还没有训练：按“训练”，或按“单步”一步一步来。',
  learnStatus: '第 {steps} 步 · 损失 {loss} · 温度 {temperature} · {model}',
  learnModel: '{layers} 层 × {heads} 头，宽度 {width}，{context} 个位置，{vocabulary} 个词元',
  learnNeedText: '请给它至少两个字符的文本来学习。',
  learnError: '训练停止：{message}',
  learnLossTitle: '损失（奈特）',
  learnLossLabel: '{steps} 步的损失：开始时 {first}，现在 {last}',
  learnLossEmpty: '还没有训练步：开始训练后，损失会画在这里。',
  learnEntropyTitle: '每个头的平均行熵（比特）：头越聚焦，它越低',
  learnEntropyLabel: '每个头在各快照上的平均行熵（比特）；第 1 层虚线，第 2 层实线，选中的头加粗',
  learnEntropyEmpty: '还没有快照：开始训练后，每个头的熵会画在这里。',
  learnPreviousNote: '点线：上一次训练，用来对比（例如有无降温）。',
  learnTimeline: '快照',
  learnAtStep: '第 {step} 步',
  learnHeadsEmpty: '开始训练后，这里会显示每个头在探针序列上的注意力。',
  learnHeadName: '第{layer}层 头{head}',
  learnLabelEmerged: '{head} 在第 {step} 步成为{label}头',
  'learnLabel:previous-token': '前一词元',
  'learnLabel:induction': '归纳',
  'learnLabel:sink': '汇聚',
};
