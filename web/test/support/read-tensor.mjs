// For tests that read a checkpoint in a bounded worker (bounded.mjs): one tensor of a PyTorch
// zip as a plain array.

import { createTensorSet } from '../../src/models/files/tensor-set.js';
import { readTorchZip } from '../../src/models/files/torch-zip.js';

export function readTensor(bytes, name) {
  return [...createTensorSet(readTorchZip(bytes)).readFloat32(name)];
}
