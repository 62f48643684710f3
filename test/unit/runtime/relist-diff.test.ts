import { describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { diffRelist } from '../../../src/runtime/relist-diff.js';

const cm = (name: string, resourceVersion: string, namespace = 'ns'): V1ConfigMap => ({
  metadata: { name, namespace, resourceVersion },
});

describe('diffRelist', () => {
  it('reports what was added, changed and deleted, and leaves out what is unchanged', () => {
    const cached = new Map([
      ['ns/same', cm('same', '1')],
      ['ns/changed', cm('changed', '2')],
      ['ns/gone', cm('gone', '3')],
    ]);
    const diff = diffRelist(cached, [cm('same', '1'), cm('changed', '7'), cm('new', '8')]);
    expect(diff.added.map((o) => o.metadata?.name)).toEqual(['new']);
    expect(
      diff.updated.map(({ old, current }) => [
        old.metadata?.resourceVersion,
        current.metadata?.resourceVersion,
      ]),
    ).toEqual([['2', '7']]);
    expect(diff.deleted).toEqual([cm('gone', '3')]);
  });

  it('tells objects of the same name in different namespaces apart', () => {
    const cached = new Map([['a/x', cm('x', '1', 'a')]]);
    const diff = diffRelist(cached, [cm('x', '1', 'b')]);
    expect(diff.added).toHaveLength(1);
    expect(diff.deleted).toHaveLength(1);
  });
});
