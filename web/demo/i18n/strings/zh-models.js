// 演示页面中真实模型的中文文本（模型选择、视图、预测、掩码手术、快照）。
// 由 demo/i18n.js 合并进中文表；键和占位符与 en-models.js 相同（test/i18n.test.js 会检查）。
export const zhModels = {
  // 模型选择
  modelBarTitle: '模型',
  modelUntrained: '未训练的注意力层（即时）',
  modelReal: '真实模型',
  modelKindHint:
    '未训练的层展示注意力如何计算；真实模型展示训练后的模型学到了什么。stories260K 随页面附带；' +
    '其他模型在按下“加载”之前不会下载。',
  modelListLabel: '训练好的模型：一个随附，其余在 Hugging Face Hub 上',
  modelHubLabel: '其他 Hub 模型 ID',
  modelHubGo: '查询',
  modelDropLabel:
    '或者使用你自己的文件（config.json、tokenizer.json、model.safetensors 或 pytorch_model.bin；' +
    'llama2.c 的 .bin 及其 tok*.bin；或 .gguf 文件）：拖到这里，或点击选择',
  catalogStories260K: 'Llama 2 架构（llama2.c），用儿童故事训练：随附，1 MB，即时',
  catalogTinyStories1M: 'GPT-Neo，局部层与全局层交替；用儿童故事训练',
  catalogTinyStories8M: '同一系列，更宽',
  catalogDistilGpt2: 'GPT-2，蒸馏到更少的层',
  catalogGpt2: 'GPT-2 small',
  catalogBertBase: 'BERT，英文，小写：填补 [MASK]',
  catalogBertChinese: 'BERT，中文，每个汉字一个词元',
  catalogBertTiny: 'BERT，最小的一个',
  catalogBertMultilingual: 'BERT，多种语言：把一句话和它的译文作为一对输入',
  catalogOpusZhEn: 'Marian，中译英：一边翻译，一边显示每个词看向原文的哪里',
  modelChecking: '正在查询大小…',
  modelSizeUnknown: '大小未知：浏览器处于离线状态，且没有缓存这个模型。仍可尝试加载。',
  modelSizeUnknownShort: '大小未知（离线）',
  modelUnavailable: '无法获取',
  modelSizeCached: '{size}，已在本浏览器中',
  modelShape: '{type} · {layers} 层 × {heads} 个头 · {parameters} 个参数',
  modelDownload: '下载：{size}，共 {n} 个文件。',
  modelDownloadUnknown: '下载：{n} 个文件；服务器没有给出大小。',
  modelMemory:
    '内存：权重在 WebAssembly 中占 {size}（{dtype}），加载时另需 {scratch}；下载的文件会保留到权' +
    '重写入为止。',
  modelCached: '所有文件都已在本浏览器的缓存中：可以离线加载。',
  modelDtypeLabel: '权重存储为',
  modelDtypeF32: 'f32（与训练时相同）',
  modelDtypeF16: 'f16（内存减半）',
  modelDtypeQ8: 'q8（8 位分块，约四分之一内存）',
  modelDtypeQ4: 'q4（4 位分块，约五分之一内存）',
  modelMissing:
    '无法加载：模型仓库里没有 {files}。attnlens 读取 tokenizer.json（只有 vocab.txt 的模型需要先' +
    '转换）。',
  modelTooLarge: '放不下：{reason}',
  modelTooLargeDevice: '加载时约需 {size}，超过本设备所报告的 {device} GB 内存的一半',
  modelLoad: '加载模型（{size}）',
  modelLoadUnknown: '加载模型（大小未知）',
  modelFromCache: '来自本浏览器',
  modelCancel: '取消',
  modelChange: '选择其他模型',
  modelStarting: '正在开始下载…',
  modelTotal: '总计',
  modelCancelled: '已取消：没有保留下载了一半的文件。',
  modelFailNext:
    '内置模型不需要网络。如果你有这个模型的文件（config.json、tokenizer.json 和权重），' +
    '也可以把它们拖进放自己文件的框里。',
  modelUseBundled: '使用内置模型（stories260K）',
  modelLoaded:
    '已加载：{type} · {layers} 层 × {heads} 个头 · {parameters} 个参数 · {backend}。已保存在本浏' +
    '览器中，下次可直接使用。',
  modelLoadedBundled:
    '已加载：{type} · {layers} 层 × {heads} 个头 · {parameters} 个参数 · {backend}。' +
    '它随页面附带：无需下载，离线也可用。',
  modelLoadedFiles:
    '已加载：{type} · {layers} 层 × {heads} 个头 · {parameters} 个参数 · {backend}。',
  modelLoadedOffline:
    '已从本浏览器的缓存加载，无需联网：{type} · {layers} 层 × {heads} 个头 · {parameters} 个参数' +
    ' · {backend}。',
  modelYourFiles: '你的文件（{n} 个）',
  modelYourFilesShort: '你的文件',
  modelPickFilesAgain: '请重新选择或拖入模型文件：链接无法携带文件。',
  modelFilesLooking: '正在查找本浏览器保存的文件…',
  modelFilesSaving: '正在把它们保存在本浏览器中，供下次使用…',
  modelFilesKept: '已保存在本浏览器中，下次可直接使用（不在链接里：链接无法携带文件）。',
  modelFilesNotKept: '这个浏览器没有保存它们（存储被拒绝或已满）：下次请重新选择。',
  modelFilesKeptList: '本浏览器保存的你的文件：{names}。',
  modelUseKeptFiles: '使用它们',
  modelForgetFiles: '忘掉这些文件',
  modelWaiting: '请先在上方加载模型，才能看到它的注意力。',
  modelLoading: '正在加载模型…',
  modelRunning: '模型正在运行…',
  modelRunFailed: '模型无法处理这段文本：{message}',
  modelCounts: '{n} 个{unit}',
  modelTruncated: '只显示 {total} 个词元中的前 {shown} 个',
  unitTokens: '词元',
  unitWords: '词',
  // 文本
  pairLabel: '第二句',
  pairHint: '可选：BERT 读入 [CLS] 第一句 [SEP] 第二句 [SEP]',
  insertMask: '在光标处插入 [MASK]',
  // 设置
  layerHeadLegend: '层与头',
  layerLabel: '层',
  headSelectLabel: '头',
  layerOption: '第 {n} 层 · {mask}',
  headOption: '第 {n} 个头 · {label}',
  wordsToggle: '按词查看：把子词重新合并成原文中的词',
  blockToggle: '只看两句之间的分块',
  snapshotScope: '快照包含',
  'snapshotScope:head': '当前这个头（约 {size}）',
  'snapshotScope:layer': '当前这一层的所有头（约 {size}）',
  'snapshotScope:all': '所有层和所有头（约 {size}）',
  surgeryToggle: '掩码手术：替换模型自带的掩码',
  surgeryWhere: '应用于',
  surgeryEveryLayer: '所有层',
  surgeryOff: '未开启：每层使用自己的掩码（{masks}）。',
  surgeryNote: '所选的层使用 {mask}；修改前后并排显示。',
  surgeryBefore: '修改前：模型自带的掩码',
  surgeryAfter: '修改后：',
  surgeryNone: '无',
  // 视图
  viewModel: '模型',
  viewOverlay: '头视图',
  viewFocus: '词元焦点',
  modelViewHint:
    '模型的每一层（纵向）和每个头（横向）。每格下方是它在重复两遍的随机词元上赢得的角色（归纳、' +
    '前一个词元、汇聚），否则是它在这段文本上最突出的模式（悬停或聚焦可看依据）。点击一格即可放大' +
    '查看。',
  overlayHint: '同一层的多个头叠加绘制，各用一种颜色。在设置里选层，在这里选头。',
  overlayHeads: '绘制的头',
  overlayLabel: '第 {layer} 层各个头的注意力连线，每个头一种颜色',
  focusHint: '在上方选一个词元：每一层、每个头中它最关注哪个键，以及关注多少。',
  focusCaption: '“{query}”看向哪里：每个头给它权重最大的键',
  focusCell: '{key} {weight}：第 {layer} 层，第 {head} 个头',
  viewRollout: '展开与流',
  viewSinks: '注意力汇聚',
  rolloutHint: '在上方选一个词元：把所有层都算上之后，它有多少来自每个输入词元，用两种方式来读。',
  rolloutCaption: '“{query}”经过全部 {layers} 层之后从哪里取得信息',
  rolloutToken: '词元',
  rolloutColumn: '展开（rollout）',
  flowColumn: '流（flow）',
  rolloutRegion: '所选词元的展开与流（表格）',
  rolloutAssumes:
    '假设信息按线性方式混合：每层的各个头取平均，残差连接保留每个词元的一半（0.5·A + 0.5·I），' +
    '再把各层依次相乘。',
  flowAssumes:
    '把同样的权重看作管道的容量：从这个词元回到每个输入词元最多能流过多少，' +
    '各条路径争用最窄的那一层。' +
    '两者都不计值向量、MLP 和归一化：它们指出信息可能来自哪里，而不是模型的理由。',
  rolloutLater: '后面的词元没有列出：在因果模型里它们到不了这个词元。',
  flowPending: '正在计算流……',
  flowRefused: '这段文本没有流：{message}',
  rolloutWords: '这些读数按词元计算：关闭“按词查看”即可看到。',
  sinksHint:
    '每个头有多少注意力停在第一个词元上（对其余词元取平均）：无事可做的头常把注意力放在那里。',
  sinksCaption: '落在第一个词元“{token}”上的注意力份额，每个头一个点，按层排列（{rows} 行的平均）',
  sinksAxisLayer: '层',
  sinksCaptionBos:
    '落在第一个词元“{token}”（圆点）和“{bos}”（方块）上的注意力份额，每个头一个标记，' +
    '按层排列（{rows} 行的平均）',
  sinksBosDot: '第 {layer} 层，第 {head} 个头：{share} 落在“{token}”上',
  sinksBosMeanColumn: '落在“{token}”上的平均',
  sinksDot: '第 {layer} 层，第 {head} 个头：{share} 落在第一个词元上',
  sinksLayerColumn: '层',
  sinksMeanColumn: '各头的平均',
  sinksTopColumn: '最关注第一个词元的头',
  sinksHead: '第 {head} 个头 · {share}',
  sinksOpen: '在矩阵中打开第 {layer} 层第 {head} 个头（{share} 落在第一个词元上）',
  sinksNoRows: '只有一个词元：还没有可以平均的内容。',
  layerHeadN: '第 {layer} 层，第 {head} 个头',
  modelRegion:
    '{name} · 查询 {queries} × 键 {keys} · 最强 {weight}：' +
    '“{query}”（{queryAt}）→ “{key}”（{keyAt}）',
  modelRegionMasked: '{name} · 查询 {queries} × 键 {keys} · 已遮蔽',
  legendOwnMax: '各自的最大权重',
  captionModel:
    '第 <b>{layer}</b> 层 · 第 <b>{head}</b> 个头（共 {heads} 个）· <b>{n}</b> 个{unit} · 掩码 <' +
    'code>{mask}</code> · 掩码手术 <code>{surgery}</code>',
  captionModelBlock:
    '第 <b>{layer}</b> 层 · 第 <b>{head}</b> 个头（共 {heads} 个）· 行是第一句，列是第二句（权重' +
    '取自完整的行）· 掩码手术 <code>{surgery}</code>',
  // 头的标签
  'headLabel:previous': '前一个词元',
  'headLabel:first': '首词元汇聚',
  'headLabel:self': '自身',
  'headLabel:special': '特殊词元',
  'headLabel:broad': '分散',
  headLabelNone: '—',
  'headLabelHint:previous': '平均每行有 {value} 的权重落在紧挨着的前一个词元上',
  'headLabelHint:first': '平均每行有 {value} 的权重落在第一个词元上',
  'headLabelHint:self': '平均每行有 {value} 的权重留在词元自身',
  'headLabelHint:special': '平均每行有 {value} 的权重落在 {tokens} 上',
  'headLabelHint:broad': '各行分布分散：熵达到最大可能值的 {value}',
  headLabelNoneHint: '没有哪一种模式占到它一半的注意力',
  // 模型在探针上的头得分（src/interpret/head-scores.js、Model.headScores）
  'headLabel:induction': '归纳',
  'headLabel:previous-token': '前一个词元',
  'headLabel:sink': '汇聚',
  headProbeScores:
    '在重复两遍的随机词元上：归纳 {induction}（首次出现之后的那个词元），前一个词元 {previous}，' +
    '汇聚 {sink}（第一个词元和特殊词元）',
  headProbePending: '在重复两遍的随机词元上的得分：正在测量…',
  headProbeFailed: '在重复两遍的随机词元上的得分：无法测量（{message}）',
  headOnText: '在这段文本上：{label}，{measure}',
  // 预测
  predictionsTitle: '模型的预测',
  predictionsNext: '“{token}”之后的下一个词元：',
  predictionsMaskAt: '第 {n} 个词元处的 [MASK]',
  predictionsNoMask: '在文本中放入 {mask}（用下方的按钮），看看模型会填什么。',
  predictionsNoHead: '这个检查点没有掩码语言模型头：只有注意力，没有预测。',
  predictionsOwn: '使用模型自带的掩码',
  predictionsSurgery: '使用 {mask}',
  predictionChanged: '猜测改变了：{before}（{p}）变成了 {after}（{q}）。',
  predictionSame: '最可能的猜测仍是 {before}（{p} → {q}）。',
  // 真实的头上的逐步讲解
  explainMetaModel: '第 {i} 个词元 · 第 {layer} 层 · 第 {head} 个头 · d_k = {d}',
  explainModelWaiting: '正在展开这一层…',
  stripeNoteModel:
    '这个头的所有查询平均给 {key} {mean}，这里是 {w}：{key} 是一条列条纹（所有查询都看的“汇点”）' +
    '，并不是与这个查询的匹配。',
  standoutNoteModel: '其他查询平均只给 {key} {mean}，这里是 {w}：这个查询确实突出地选中了它。',
  explainModelTokensOnly:
    '逐步讲解基于模型自己的词元和完整的行：关闭“按词查看”和“两句之间的分块”后即可讲解。',
  step2ModelScaled:
    '这一层在 softmax 之前把每个分数除以 √d_k = {root}（即乘以 {scale}），与模型训练时相同；没有' +
    '温度。',
  step2ModelUnscaled: 'GPT-Neo 不缩放分数：softmax 直接使用 q·k（缩放系数为 1）。',
  step2ModelOther: '这一层在 softmax 之前把每个分数乘以 {scale}。',
  // 导出
  exportSnapshot: '快照',
  footerRealModel:
    '使用真实模型时，权重来自检查点，由 attnlens 自己的内核在本标签页中运行；文件来自 Hugging Fa' +
    'ce Hub（或你的磁盘），并保存在本浏览器的缓存中。你输入的内容不会离开本页面。',
  // 在真实模型中试一试
  ideaPronounReal:
    '在训练过的模型中：打开 distilgpt2，对“it”使用词元焦点：把它指向“animal”（或“street”）的那些' +
    '头，才是训练后的层的行为。',
  ideaCrossReal:
    '在训练过的模型中：多语言 BERT 把“我爱自然语言处理”和它的译文作为一对读入；两句之间的分块显' +
    '示哪些词互相对应。',
  openReal: '在 {model} 中打开',
  openRealNamed: '{title}：在 {model} 中打开',
  // 带模型或快照的 <attn-lens>
  widgetModelAbout: '{model}：{text}',
  // “两个模型并排”（model/compare-panel.js、model/compare-columns.js）
  compareTitle: '两个模型并排',
  compareOpen: '与第二个模型比较',
  compareIntro:
    '选第二个模型：同一段文字同时经过两个模型，它们的注意力头、预测和词元并排显示。' +
    '下载任何东西之前，先显示两者共需多少内存。',
  compareSecondLabel: '第二个模型',
  compareChoose: '请选择…',
  compareFilesLabel: '或你自己的文件',
  compareTrained: '“看它学习”中训练的模型（第 {steps} 步）',
  compareTrainedName: '在此训练（第 {steps} 步）',
  compareChecking: '正在查看 {name} 需要多少…',
  compareMemory:
    '{first} 占用 {firstSize} wasm 内存；{second} 将再占 {secondSize}（加载时另需 {scratch}）：' +
    '合计 {total}，页面允许模型使用 {limit}。',
  compareMemoryLoaded:
    '{first} 占用 {firstSize} wasm 内存，{second} 占用 {secondSize}：' +
    '合计 {total}，页面允许模型使用 {limit}。',
  compareTooLarge:
    '未加载：两个模型合计需要 {total}，超过页面允许的 {limit} wasm 内存。' +
    '请选一个更小的第二个模型。',
  compareNotText: '未加载：{name}{reads}，无法与页面的模型一起处理这段文本。请选一个读文本的模型。',
  compareReadsPictures: '读取的是图片',
  compareTranslates: '是翻译模型',
  compareLoad: '在旁边加载 {name}（{size}）',
  compareLoading: '正在加载 {name}… {done}',
  compareRemove: '移除第二个模型',
  compareRunning: '两个模型正在处理这段文字…',
  compareOwnSettings:
    '每个模型用自己的分词器和掩码，在自己的词元上运行：掩码手术和按词显示只作用于上方的视图。' +
    '在一个网格中选中某个头，另一个网格会选中同一层同一头。',
  compareColumnTitle: '{name} · {type}，{layers} 层 × {heads} 头，{parameters} 参数，{memory}',
  compareTokensLabel: '{name} 的词元',
  compareTokensDiffer:
    '两个分词器对这段文字的切分不同：{first} 得到 {a} 个词元，{second} 得到 {b} 个。',
  compareTokensSame: '两个分词器把这段文字切成相同的 {n} 个词元。',
  compareHeadMissing: '{name} 没有第 {layer} 层第 {head} 头。',
  comparePredictions: '预测',
  // 图片模式（视觉模型：ViT、DINO、DINOv2）
  pictureTitle: '图片',
  pictureHint:
    '视觉 Transformer 把图片切成方形小块；类别令牌汇集它们得出答案。看看每个头在看哪里。',
  pictureDrop: '把图片拖到这里，或选择文件',
  pictureSample: '示例图片',
  pictureCamera: '摄像头',
  pictureCameraStop: '关闭摄像头',
  pictureTake: '拍照',
  pictureFollow: '跟随摄像头',
  pictureFollowStop: '停止跟随',
  pictureFollowing: '正在跟随摄像头：每秒 {fps} 帧（已显示 {shown} 帧，计算时丢弃 {dropped} 帧）。',
  pictureRunning: '正在用模型处理图片…',
  pictureDone: '{width} × {height} 像素，分成 {rows} × {columns} 个小块。',
  pictureFailed: '图片没有运行成功：{message}',
  pictureLayer: '层',
  pictureHead: '头',
  pictureHeadMean: '各头平均',
  pictureHeadN: '头 {head}',
  pictureOpacity: '热图不透明度',
  pictureFocusClear: '回到类别令牌',
  pictureFocusHint: '点击一个小块，或聚焦图片后用方向键，查看该小块在看哪里；按 Esc 回到类别令牌。',
  pictureFromClass: '类别令牌在看哪里',
  pictureFromPatch: '第 {row} 行第 {column} 列的小块在看哪里',
  pictureMainCaption: '第 {layer} 层，{who}：{from}。',
  pictureRollout: '类别令牌跨所有层的注意力展开（rollout）',
  pictureLastLayer: '最后一层的原始注意力（各头平均）',
  pictureSurgeryTitle: '掩码手术',
  pictureSurgeryOn: '局部窗口：每个小块只看它周围的小块',
  pictureSurgeryWindow: '窗口',
  pictureSurgerySize: '{k} × {k} 个小块',
  pictureSurgeryHint:
    '每一层中，每个小块只关注它周围的小块；' +
    '类别令牌（以及寄存器令牌）仍然看得到所有小块，也被所有小块看到。' +
    '上面的热图显示加了窗口的模型；这里把它和完整注意力并排比较。' +
    '第 0 层的类别令牌两边看到的小块相同：请选后面的层，或点击一个小块看它的窗口。',
  pictureSurgeryRunning: '正在用窗口重新处理图片…',
  pictureSurgeryFull: '完整注意力',
  pictureSurgeryMasked: '（{k} × {k} 窗口）',
  pictureSurgeryWindowed: '{k} × {k} 局部窗口',
  pictureSurgerySame: '在 {k} × {k} 窗口下最高标签不变：{label}。',
  pictureSurgeryChanged: '在 {k} × {k} 窗口下最高标签改变：{before} → {after}。',
  pictureGridTitle: '所有层 × 头（类别令牌）',
  pictureGridCell: '第 {layer} 层，头 {head}',
  pictureDistanceTitle: '各层的平均注意力距离',
  pictureDistanceHint:
    '每个点是一个头：按小块之间的注意力加权的距离（输入像素）。低于 {threshold} 像素' +
    '（均匀注意力的 {uniform} 像素的一半）为局部头，否则为全局头：' +
    '局部 {local} 个，全局 {global} 个。',
  pictureDistanceAria: '各层每个头的平均注意力距离；低于 {threshold} 像素为局部',
  pictureDistanceDot: '第 {layer} 层，头 {head}：{px} 像素，{label}',
  pictureLocal: '局部',
  pictureGlobal: '全局',
  pictureLayerAxis: '层',
  pictureLabel: '{label}：{p}%',
  pictureExportPng: 'PNG',
  pictureExportJson: 'JSON',
  pictureExportSnapshot: '快照',
  pictureSnapshotShown:
    '{model} 的快照（{date}），直接由文件绘制，无需模型，也不做计算。它只含类别词元的注意力图：' +
    '图块聚焦和注意力距离需要模型本身。',
  pictureSnapshotClose: '关闭快照',
  pictureSnapshotFailed: '无法打开这个快照：{message}',
  // 翻译模式（model/translate-panel.js）
  translateTitle: '逐个词元的翻译',
  translateHint:
    '模型一次写出一个词元。每个新词元都通过交叉注意力回看原文：下面的对齐图随每个词元增长。',
  translateRun: '翻译',
  translateStop: '停止',
  translateLayer: '解码器层',
  translateHead: '头',
  translateAllLayers: '所有层（平均）',
  translateAllHeads: '所有头（平均）',
  translateAlignment: '交叉注意力对齐',
  translateMatrixCaption: '对齐：译文（行）× 原文（列）',
  translateLinesCaption: '连线：上为原文，下为译文',
  translateSource: '原文',
  translateTarget: '译文',
  translateIdle: '输入要翻译的文本。',
  translateGoing: '翻译中…… 已有 {n} 个词元',
  translateDone: '共 {n} 个词元，完成',
  translateDoneBeams: '共 {n} 个词元，完成：{beams} 条束中最好的一条',
  translateDecoding: '解码',
  translateDecodeGreedy: '贪心',
  translateDecodeBeams: '束搜索（模型的 num_beams）',
  translateStopped: '在 {n} 个词元后停止',
  translateHeadsTitle: '哪些头在对齐',
  translateHeadsHint:
    '每个头落在译词所对应原词上的注意力份额（{pairs}）；达到 {share} 及以上的头算作对齐。',
  translateHeadsNoDictionary:
    '这段文本没有“哪个词译成哪个词”的词典，因此不给头打分：选一个头查看它的对齐。',
  translateShareTitle: '落在对应原词上的注意力份额：{share}',
  translateAligns: '对齐',
  translateCrossMask: '交叉注意力',
  translateMaskFull: '完整（训练时的样子）',
  translateMaskLast: '只看最后一个源词元：一个固定向量',
  translateMaskMean: '源的平均',
  translateMaskLocal: '局部窗口（±2，Luong）',
  translateCompare: '完整注意力下：{text}',
  headsMatterIntro:
    '这个预测依赖哪些头？依次关闭每个头，测量目标词元对数概率的变化。' +
    '点击一些头（或在其上按 Enter）将它们一起关闭，看预测如何变化。',
  headsMatterOpen: '测量每个头',
  headsTarget: '目标词元',
  headsTargetTop: '首选预测',
  headsMode: '关闭方式',
  headsModeZero: '置零（移除该头）',
  headsModeMean: '均值（保留它在文本上的平均）',
  headsClear: '重新开启所有头',
  headsMeasuring: '正在测量各个头… {done} / {total}',
  headsMeasured: '已测量 {total} 个头，用时 {ms} 毫秒。',
  headsCancelled: '已取消：没有测完所有头。',
  headsMeasureAgain: '重新测量',
  headsFailed: '无法测量各个头：{message}',
  lensIntro:
    '模型何时知道答案？每一层的隐藏状态都经过模型自己的最终归一化和输出层来读取' +
    '（nostalgebraist 的 logit lens）。悬停或聚焦一个格子，查看它的首选词元。',
  logitLensOpen: '显示每一层的预测',
  lensRunning: '正在读取每一层…',
  lensFailed: '无法读取各层：{message}',
  translateLinesScroll: '左右滚动可看到全部词元（也可聚焦连线区后用方向键）。',
  // 因果模型的续写栏（model/continue-panel.js）
  continueTitle: '让模型接着写',
  continueRun: '续写',
  continueStop: '停止',
  continueTokens: '新词元数',
  continueTemperature: '温度（0：贪心）',
  continueSeed: '随机种子',
  continueIdle: '“续写”把模型预测的下一个词元逐个加到文本后面；每个新行都会加入各个视图。',
  continueGoing: '续写中…… 已有 {n} / {max} 个新词元',
  continueDone: '{n} 个新词元，已写入文本',
  continueEos: '{n} 个新词元：模型结束了文本（文本结束词元）',
  continueStopped: '在 {n} 个新词元后停止，已写入文本',
  continueNext: '续写写入文本后，才会给出下一个词元的预测。',
};
