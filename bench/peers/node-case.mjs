#!/usr/bin/env node
// Runs one benchmark case in this process and prints its result as the last line of stdout
// (JSON). run.mjs starts one such process per case, so libraries never share a heap and the peak
// resident memory of the process belongs to that case alone.
//
//   node bench/peers/node-case.mjs '{"runner":"attnlens-simd","n":512,"mask":"causal","threads":1}'

import { readFile } from 'node:fs/promises';
import { runCase } from './core/run-case.js';

const MODELS = new URL('./models/build/', import.meta.url);

const platform = {
  name: `Node ${process.versions.node}`,
  // Node has SharedArrayBuffer and worker_threads, whatever the library makes of them.
  sharedMemory: true,
  loadModel: async (name) => new Uint8Array(await readFile(new URL(`${name}.onnx`, MODELS))),
  // Resident set now and the process's peak so far (bytes).
  memory: () => ({
    rss: process.memoryUsage().rss,
    peakRss: process.resourceUsage().maxRSS * 1024,
  }),
  // CPU time of the whole process, every thread included (milliseconds).
  cpuMs: () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  },
};

const spec = JSON.parse(process.argv[2]);
const result = await runCase(spec, platform);
process.stdout.write(`\n${JSON.stringify(result)}\n`);
// Thread pools (onnxruntime's workers) would keep the process alive.
process.exit(0);
