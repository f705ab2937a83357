#!/usr/bin/env node
// The static server of the demo and the widget pages (web/scripts/static-server.mjs: COOP/COEP,
// application/wasm, the pages' Content-Security-Policy as a header), from the command line.
//
//   node scripts/serve.mjs [--root DIR] [--port N] [--host H]
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startServer } from '../web/scripts/static-server.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const { values } = parseArgs({
  options: {
    root: { type: 'string', default: join(here, '..', 'web') },
    port: { type: 'string', default: process.env.PORT ?? '8080' },
    host: { type: 'string', default: '127.0.0.1' },
  },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`--port: expected an integer 0..65535, got ${values.port}`);
  process.exit(2);
}
const server = await startServer({ root: values.root, port, host: values.host });
const { port: actual } = server.address();
console.log(`attnlens demo: http://localhost:${actual}/demo/  (serving ${resolve(values.root)})`);
