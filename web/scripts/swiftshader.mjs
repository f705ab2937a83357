#!/usr/bin/env node
// Runs a command with Chromium's SwiftShader (a CPU implementation of Vulkan) as the only Vulkan
// driver, so that the `webgpu` package (Dawn) finds an adapter on machines without a GPU:
//
//   node scripts/swiftshader.mjs node --test test/webgpu/
//
// Debian's `chromium` package ships the driver and the Vulkan loader in /usr/lib/chromium
// (override with CHROMIUM_LIB_DIR). The loader is found through LD_LIBRARY_PATH, which the
// dynamic linker reads only at process start: hence a child process rather than a setting.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.CHROMIUM_LIB_DIR ?? '/usr/lib/chromium';
const icd = join(dir, 'vk_swiftshader_icd.json');
if (!existsSync(icd)) {
  console.error(
    `swiftshader: ${icd} not found; install Debian's chromium package or set CHROMIUM_LIB_DIR`,
  );
  process.exit(1);
}
const [command, ...args] = process.argv.slice(2);
if (!command) {
  console.error('usage: node scripts/swiftshader.mjs COMMAND [ARGS...]');
  process.exit(2);
}
const env = {
  ...process.env,
  VK_ICD_FILENAMES: icd,
  LD_LIBRARY_PATH: [dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
};
const { status, signal, error } = spawnSync(command, args, { stdio: 'inherit', env });
if (error) {
  console.error(`swiftshader: cannot run ${command}: ${error.message}`);
  process.exit(1);
}
process.exit(signal ? 1 : status);
