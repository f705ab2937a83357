// What the numbers were measured on: CPU, cores, memory, OS, Node, the attnlens commit, the date
// and the load average (the machine may be shared; a high load means noisy numbers).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';

function osName() {
  try {
    const release = readFileSync('/etc/os-release', 'utf8');
    const pretty = release.match(/^PRETTY_NAME="?([^"\n]*)"?/m)?.[1] ?? os.type();
    const debian = readFileSync('/etc/debian_version', 'utf8').trim();
    return `${pretty} (${debian})`;
  } catch {
    return `${os.type()} ${os.release()}`;
  }
}

function gitCommit() {
  try {
    const cwd = new URL('../../../', import.meta.url);
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd,
      encoding: 'utf8',
    }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd,
      encoding: 'utf8',
    }).trim();
    return dirty ? `${commit} (with uncommitted changes)` : commit;
  } catch {
    return 'unknown';
  }
}

export function describeMachine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryBytes: os.totalmem(),
    os: osName(),
    kernel: os.release(),
    node: process.versions.node,
    v8: process.versions.v8,
    commit: gitCommit(),
    date: new Date().toISOString(),
    load: os.loadavg().map((x) => Number(x.toFixed(2))),
  };
}
