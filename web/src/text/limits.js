// Input caps for the text-to-attention path.
//
// analyze() materialises H weight matrices and H score matrices of N x N floats, and the demo
// redraws them on every slider move. At N = 512 one head's weights are 1 MiB and one analysis of
// a few heads takes tens of milliseconds, which keeps a page responsive; a pasted book (hundreds of
// thousands of tokens) would need gigabytes and minutes. The character cap is checked first, in
// O(1), so segmentation itself can never take long.

/** Most UTF-16 code units tokenize() accepts (string.length). */
export const MAX_TEXT_LENGTH = 20000;

/** Most tokens tokenize() may produce (so the most queries or keys analyze() works on). */
export const MAX_TOKENS = 512;

/**
 * Widest embedding and projection (modelDim, and heads * headDim) the text path builds. Each
 * projection matrix is at most 1024 x 1024 floats (4 MiB), so the seeded weights are generated in
 * milliseconds.
 */
export const MAX_MODEL_DIM = 1024;

/**
 * Most heads analyze() runs. Weights and raw scores are returned for every head: at MAX_TOKENS that
 * is 2 MiB per head, 32 MiB at 16 heads.
 */
export const MAX_HEADS = 16;

/** The most a seed can be: seeds are hashed as uint32. */
export const MAX_SEED = 0xffffffff;
