// The textual mask notation shared by the demo's URL and the widget's `mask` attribute:
// parts joined by "+", e.g. "causal+local:2", "dilated:2:2", "strided:3+tokens:0,5".
//
//   global          no restriction (the default)
//   causal          a query sees itself and earlier keys only
//   local:W         keys within W positions on either side
//   dilated:W:D     every D-th key, W steps to either side
//   strided:S       Sparse Transformer strided: |i - j| < S or (i - j) divisible by S
//   fixed:S:C       Sparse Transformer fixed: same block of S, or the last C of every block
//   tokens:a,b,...  positions that see and are seen by everything (global tokens)

export const PATTERNS = ['global', 'local', 'dilated', 'strided', 'fixed'];

export function defaultMask() {
  return {
    pattern: 'global',
    causal: false,
    window: 2,
    dilation: 2,
    stride: 3,
    summary: 1,
    globalTokens: [],
  };
}

function integer(text, name, min) {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`mask: ${name} must be an integer >= ${min}, got "${text}"`);
  }
  return value;
}

// "causal+local:2" -> { pattern, causal, window, dilation, stride, summary, globalTokens }.
// Throws RangeError naming the bad part.
export function parseMask(text) {
  const mask = defaultMask();
  const source = String(text ?? '').trim();
  if (!source) return mask;
  for (const part of source
    .split('+')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [kind, ...args] = part.split(':');
    switch (kind.toLowerCase()) {
      case 'global':
      case 'full':
        break;
      case 'causal':
        mask.causal = true;
        break;
      case 'local':
      case 'window':
        mask.pattern = 'local';
        mask.window = integer(args[0] ?? '2', 'window', 0);
        break;
      case 'dilated':
        mask.pattern = 'dilated';
        mask.window = integer(args[0] ?? '2', 'window', 0);
        mask.dilation = integer(args[1] ?? '2', 'dilation', 1);
        break;
      case 'strided':
        mask.pattern = 'strided';
        mask.stride = integer(args[0] ?? '3', 'stride', 1);
        break;
      case 'fixed':
        mask.pattern = 'fixed';
        mask.stride = integer(args[0] ?? '3', 'stride', 1);
        mask.summary = integer(args[1] ?? '1', 'summary', 1);
        if (mask.summary > mask.stride)
          throw new RangeError(
            `mask: summary must be <= stride, got ${mask.summary} > ${mask.stride}`,
          );
        break;
      case 'tokens':
        mask.globalTokens = (args[0] ?? '')
          .split(',')
          .filter((s) => s !== '')
          .map((s) => integer(s, 'global token', 0));
        break;
      default:
        throw new RangeError(
          `mask: unknown part "${part}" (expected global, causal, local:W, dilated:W:D, strided:S, fixed:S:C or tokens:i,j)`,
        );
    }
  }
  mask.globalTokens = [...new Set(mask.globalTokens)].sort((a, b) => a - b);
  return mask;
}

export function formatMask(mask) {
  const parts = [];
  if (mask.causal) parts.push('causal');
  if (mask.pattern === 'local') parts.push(`local:${mask.window}`);
  if (mask.pattern === 'dilated') parts.push(`dilated:${mask.window}:${mask.dilation}`);
  if (mask.pattern === 'strided') parts.push(`strided:${mask.stride}`);
  if (mask.pattern === 'fixed') parts.push(`fixed:${mask.stride}:${mask.summary}`);
  if (mask.globalTokens.length) parts.push(`tokens:${mask.globalTokens.join(',')}`);
  return parts.join('+') || 'global';
}

// The attention options for `queryLength` x `keyLength` tokens. Sizes are clamped to what the
// engine accepts for this length (a window wider than the text is the whole text), and global
// tokens past the end are dropped, so typing shorter text never turns a mask into an error.
export function maskOptions(mask, queryLength, keyLength = queryLength) {
  const n = Math.max(queryLength, keyLength);
  const options = {};
  if (mask.causal) options.causal = true;
  if (mask.pattern === 'local') {
    const w = Math.min(mask.window, n);
    options.window = { before: w, after: w, dilation: 1 };
  } else if (mask.pattern === 'dilated') {
    options.window = {
      before: Math.min(mask.window, n),
      after: Math.min(mask.window, n),
      dilation: Math.min(mask.dilation, n),
    };
  } else if (mask.pattern === 'strided') {
    options.sparse = { pattern: 'strided', stride: Math.min(mask.stride, n) };
  } else if (mask.pattern === 'fixed') {
    const stride = Math.min(mask.stride, n);
    options.sparse = { pattern: 'fixed', stride, summary: Math.min(mask.summary, stride) };
  }
  const tokens = mask.globalTokens.filter((p) => p < n);
  if (tokens.length) options.globalTokens = tokens;
  return options;
}
