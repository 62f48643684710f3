import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastLines, readLogTail } from '../../../dev/localplane/log-tail.js';

describe('lastLines', () => {
  it('keeps the last lines, without the trailing newlines', () => {
    expect(lastLines('one\ntwo\nthree\n\n', 2)).toBe('two\nthree');
  });

  it('keeps everything when there are fewer lines', () => {
    expect(lastLines('only\n', 5)).toBe('only');
  });
});

describe('readLogTail', () => {
  it('reads the end of a log larger than its window', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'log-tail-')), 'big.log');
    const lines = Array.from({ length: 5_000 }, (_, index) => `line ${index}`);
    await writeFile(path, `${lines.join('\n')}\n`);

    expect(await readLogTail(path, 3, 1_024)).toBe('line 4997\nline 4998\nline 4999');
  });

  it('says so when the log cannot be read', async () => {
    expect(await readLogTail('/nonexistent/policy-grant.log')).toMatch(/^\(log not readable: /);
  });
});
