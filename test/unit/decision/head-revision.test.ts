import { describe, expect, it } from 'vitest';
import { coalescedHeadRevision } from '../../../src/decision/head-revision.js';

/** A head revision source whose reads the test completes by hand. */
function manualReads() {
  const pending: Array<{ resolve: (token: string) => void; reject: (error: Error) => void }> = [];
  const read = () =>
    new Promise<string>((resolve, reject) => {
      pending.push({ resolve, reject });
    });
  return { pending, read };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('coalescedHeadRevision', () => {
  it('reads once for a caller that finds no read in flight', async () => {
    const { pending, read } = manualReads();
    const head = coalescedHeadRevision(read);
    const first = head();
    expect(pending).toHaveLength(1);
    pending[0]?.resolve('h1');
    expect(await first).toBe('h1');
  });

  it('gives callers who arrive during a read the next read, started after it, and shares that one', async () => {
    const { pending, read } = manualReads();
    const head = coalescedHeadRevision(read);
    const early = head();
    const late = [head(), head(), head()];
    expect(pending).toHaveLength(1);
    pending[0]?.resolve('h1');
    expect(await early).toBe('h1');
    await settled();
    expect(pending).toHaveLength(2);
    pending[1]?.resolve('h2');
    expect(await Promise.all(late)).toEqual(['h2', 'h2', 'h2']);
  });

  it('passes a failed read to its callers, and the waiting ones still get a read of their own', async () => {
    const { pending, read } = manualReads();
    const head = coalescedHeadRevision(read);
    const early = head();
    const late = head();
    pending[0]?.reject(new Error('spicedb down'));
    await expect(early).rejects.toThrow('spicedb down');
    await settled();
    pending[1]?.resolve('h2');
    expect(await late).toBe('h2');
    const after = head();
    expect(pending).toHaveLength(3);
    pending[2]?.resolve('h3');
    expect(await after).toBe('h3');
  });
});
