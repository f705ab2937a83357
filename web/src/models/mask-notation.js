// The package's mask notation ('causal+local:2'), as the models entry uses it: one import site,
// so the notation module can move without touching the rest of web/src/models/.
export { defaultMask, formatMask, maskOptions, parseMask } from '../views/mask-spec.js';
