// Simplified Chinese strings of the <attn-lens> widget: the keys and {name} placeholders of
// strings/en.js (test/i18n.test.js checks it).
export const zh = {
  // the views' words, which the demo's views use too
  headN: '第 {n} 个头',
  entropyColumn: '熵（比特）',
  maskedWord: '已掩码',
  leftOutWord: '已舍弃',
  heatmapRole: '热力图',
  queries: '查询',
  keys: '键',
  tableCorner: '查询 \\ 键',
  tokensCount: '{n} 个词元',
  tokensCountOne: '{n} 个词元',
  // the <attn-lens> widget
  widgetLoading: '正在计算注意力…',
  widgetError: 'attn-lens：{message}',
  widgetTokensCross: '{nt} × {ns} 个词元',
  widgetHeadOf: '第 {n} 个头（共 {of} 个）',
  widgetHeatmapLabel: '注意力热力图：行是查询，列是键。可用方向键移动。',
  widgetLinesLabel: '注意力连线',
  widgetSource: '源',
  widgetTarget: '目标',
  widgetTableCaption: '第 {n} 个头的注意力权重',
  widgetOpen: '在 attnlens 中打开',
  widgetAllHeads: '← 全部头',
  // score names in running text (also the demo's scoreName())
  'score:scaled-dot': '缩放点积',
  'score:dot': '点积',
  'score:cosine': '余弦',
  'score:additive': '加性',
  // 模型未能加载（src/models/load-failure.js），演示页面的模型选择也用
  modelFailUnreachable:
    '无法连接 Hugging Face Hub 获取 {model}：这个浏览器似乎已离线，或者这里的网络屏蔽了 Hub。',
  modelFailNotFound: 'Hub 上没有模型 {model}（未找到，HTTP 404）：请检查 id。',
  modelFailDenied:
    'Hub 拒绝提供 {model}（HTTP {status}）：没有这个公开模型。它可能是私有的、需要授权的，' +
    '或者 id 拼错了；attnlens 只读取公开模型。',
  modelFailGated:
    '{model} 在 Hub 上需要授权（HTTP {status}）：只有登录并接受其条款的用户才能下载，' +
    '网页无法替你完成。',
  modelFailServer: 'Hub 为 {model} 返回了错误（HTTP {status}）：请稍后再试。',
  modelFailInterrupted: '{model} 的下载在完成前中断了。',
  modelFailTooLarge: '{model} 太大，这个浏览器的内存放不下。',
  modelFailOther: '无法加载 {model}：{message}',
  modelRetry: '重试',
  // 真实模型的视图
  layerN: '第 {n} 层',
  // 带模型或快照的 <attn-lens>
  widgetLoadModel: '加载模型（{size}）',
  widgetLoadModelUnknown: '加载模型（大小未知）',
  widgetModelLoading: '正在加载 {model}… {done}',
  widgetLayerHead: '第 {layer} 层 · 第 {head} 个头',
  widgetCrossAttention: '交叉注意力',
  widgetSnapshotAbout: '{model} 的快照 · {date}',
  widgetLayer: '层',
  widgetImageLoading: '正在获取图片 {image}…',
  widgetImageFailed: '无法使用这张图片：{message}',
  widgetHead: '头',
  widgetHeadMean: '各头平均',
  widgetOpacity: '不透明度',
  widgetPictureLabel: '第 {layer} 层，{who}：类别词元在图中关注的位置',
  widgetPictureView: '视图',
  widgetPictureHeads: '各头的图',
  widgetPictureRollout: '注意力展开',
  widgetPictureRolloutLabel:
    '类别词元跨全部 {layers} 层的注意力展开（rollout）：' +
    '图中各处如何汇入答案，已混合所有头和残差连接',
  widgetTopLabels: '最可能的标签',
  widgetExportSnapshot: '导出快照',
  predictionMoved: '原为第 {from} 名',
  predictionNew: '新出现',
  headsMatterTitle: '哪些头重要',
  effectsHead: '头{n}',
  effectsCell: '第 {layer} 层第 {head} 个头：{delta}',
  effectsCellOff: '第 {layer} 层第 {head} 个头：{delta}，已关闭',
  effectsCaption:
    '依次将每个头置零：“{target}”的对数概率（当前 {p}）如何变化。' +
    '红色：该头有助于它；蓝色：该头与它相悖。',
  effectsNotMeasured: '未测量各头的影响。',
  effectsTop: '最重要的头',
  effectsRanked: '第 {layer} 层 · 第 {head} 个头：{delta}',
  ablationBefore: '所有头开启',
  ablationAfter: '关闭 {n} 个头',
  ablationAfterOne: '关闭 1 个头',
  ablationNoneOff: '关闭一些头，看预测如何变化。',
  logitLensTitle: 'Logit lens（逻辑透镜）',
  lensEmbeddings: '词嵌入',
  lensPosition: '位置 {n}：{token}',
  lensCell: '{state}，在“{token}”处：{top}，{p}',
  lensCellFirst: '{state}，在“{token}”处：{top}，{p}；从这一层起即为最终答案',
  lensDetail: '{state}，“{token}”处',
  lensCaption:
    '每一层残差流在每个位置的首选词元，经过模型的最终归一化和输出层；颜色越深，概率越高。' +
    '带框：从这一层起最终答案一直排在首位。',
};
