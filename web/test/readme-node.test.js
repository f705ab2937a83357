// web/README.md's Node section as a reader runs it: the example prints the backend its comment
// names, and the require() form it shows loads the package (Node 20.19+ loads ES modules
// through require; this suite runs on such a Node).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const web = new URL('..', import.meta.url);
const readme = readFileSync(new URL('README.md', web), 'utf8');
const nodeSection = readme.slice(
  readme.indexOf('## Node\n'),
  readme.indexOf('\n## ', readme.indexOf('## Node\n') + 1),
);
const [example, requireForm] = [...nodeSection.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
const node = (args, code) =>
  execFileSync(process.execPath, [...args, code], { cwd: web, encoding: 'utf8' }).trim();

describe("README's Node section", () => {
  it('the example prints the backend its comment names', () => {
    const named = example.match(/\/\/ '([\w-]+)', \.\.\./)[1];
    const printed = node(['--input-type=module', '-e'], example).split(' ')[0];
    assert.equal(printed, named);
  });

  it('require() loads the package as shown', () => {
    assert.match(requireForm, /require\('attnlens'\)/);
    const code = `${requireForm}
      createAttention().then((attn) => { console.log(attn.backend); attn.dispose(); });`;
    assert.equal(node(['--input-type=commonjs', '-e'], code), 'wasm-simd');
  });
});
