import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copiedFiles, CRD_COPY_DIRS, REPO_ROOT } from '../../../hack/sync-packaging.js';

// One source of truth each: the CRDs are crds/, the SpiceDB schema and registry are src/spicedb/. The chart and
// config/ hold copies, which must not differ.

const RESYNC = 'a packaging copy differs from its source: run `npx tsx hack/sync-packaging.ts`';
const read = (path: string) => readFileSync(join(REPO_ROOT, path), 'utf8');

describe('packaging copies', () => {
  it.each(copiedFiles())('$target is a copy of $source', ({ source, target }) => {
    expect(existsSync(join(REPO_ROOT, target)), RESYNC).toBe(true);
    expect(read(target), RESYNC).toBe(read(source));
  });

  it.each(CRD_COPY_DIRS)('%s holds every CRD of crds/ and nothing else', (dir) => {
    const crds = readdirSync(join(REPO_ROOT, 'crds')).sort();
    expect(readdirSync(join(REPO_ROOT, dir)).sort(), RESYNC).toEqual(crds);
  });

  it('config/crd/kustomization.yaml lists every CRD', () => {
    const kustomization = read('config/crd/kustomization.yaml');
    for (const file of readdirSync(join(REPO_ROOT, 'crds'))) expect(kustomization).toContain(`bases/${file}`);
  });
});
