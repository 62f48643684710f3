import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  startHealthyProcess,
  startProcess,
  waitUntilHealthy,
} from '../../../dev/localplane/managed-process.js';
import { childrenStartedSince, childProcesses } from './child-processes.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'policy-grant-process-'));
});

const shell = (name: string, script: string) => ({
  name,
  command: '/bin/sh',
  args: ['-c', script],
  logFile: join(dir, `${name}.log`),
});

// Longer than the test's own timeout: only a failure that comes as soon as the process dies passes.
const LONGER_THAN_THE_TEST = 600_000;
const probeThatNeverAnswers = () => new Promise<boolean>(() => undefined);

describe('waitUntilHealthy', () => {
  it('fails as soon as the process exits, with its exit status and the end of its log', async () => {
    const process = startProcess(shell('exits', 'echo "bind: address already in use"; exit 3'));

    const waiting = waitUntilHealthy(process, probeThatNeverAnswers, LONGER_THAN_THE_TEST);

    await expect(waiting).rejects.toThrow(/exits exited with 3/);
    await expect(waiting).rejects.toThrow(/bind: address already in use/);
  });

  it('fails when time runs out, even while a probe hangs, naming the log and showing its end', async () => {
    const process = startProcess(shell('slow', 'echo "still loading"; exec sleep 600'));

    await expect(waitUntilHealthy(process, probeThatNeverAnswers, 1_000)).rejects.toThrow(
      /slow was not healthy within 1000 ms; last lines of .*slow\.log:\nstill loading/,
    );
    await process.kill();
  });
});

describe('startHealthyProcess', () => {
  it('stops a process that never becomes healthy', async () => {
    const before = await childProcesses();

    await expect(
      startHealthyProcess(shell('never-healthy', 'exec sleep 600'), async () => false, 1_000),
    ).rejects.toThrow(/never-healthy was not healthy/);

    expect(await childrenStartedSince(before)).toEqual([]);
  });

  it('returns the running process once the probe answers', async () => {
    const process = await startHealthyProcess(shell('healthy', 'exec sleep 600'), async () => true, 60_000);
    expect(process.isRunning()).toBe(true);
    await process.stop();
    expect(process.isRunning()).toBe(false);
  });
});
