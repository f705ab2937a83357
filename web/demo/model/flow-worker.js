// The page's attention flow, off the main thread: a max-flow per input token over a graph of up
// to 2^20 edges can take a second or more, and the reader keeps typing meanwhile. Receives
// { id, attention, shape, position }; answers { id, flow } or { id, refused } (past FLOW_LIMITS:
// the message saying which cap).
import { attentionFlow } from '../../src/interpret/flow.js';

self.onmessage = ({ data: { id, attention, shape, position } }) => {
  try {
    self.postMessage({ id, flow: attentionFlow(attention, shape, { position }) });
  } catch (error) {
    self.postMessage({ id, refused: error.message.replace(/^attention: /, '') });
  }
};
