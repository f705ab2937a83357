// The CPU time of the Chromium renderers a benchmark started (vision.mjs, camera.mjs): what the
// page itself spent, which says more than the wall clock on a shared machine.
import { readdirSync, readFileSync } from 'node:fs';

// In ms: from /proc, the sum over their threads of schedstat's nanoseconds on a CPU (Linux only).
export function rendererCpuMs() {
  const read = (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return ''; // a process or thread that has just exited
    }
  };
  const children = new Map();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    const parent = read(`/proc/${pid}/stat`)
      .replace(/^.*\) /, '')
      .split(' ')[1];
    if (parent) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  let ns = 0;
  const visit = (pid) => {
    if (read(`/proc/${pid}/cmdline`).includes('--type=renderer')) {
      for (const task of readdirSync(`/proc/${pid}/task`, { throwIfNoEntry: false }) ?? [])
        ns += Number(read(`/proc/${pid}/task/${task}/schedstat`).split(' ')[0] || 0);
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(String(process.pid));
  return ns / 1e6;
}
