import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readMountedSecret } from '../../../src/auth/application-credentials.js';
import { MountedContent } from '../../../src/auth/mounted-content.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { writeKubeletVolume } from '../../support/kubelet-volume.js';
import { metricValue } from '../../../src/observability/metric-text.js';

/** Content the test changes by hand, built into a number; "broken" does not build. */
function source(initial: string) {
  const state = { content: initial, builds: 0, unreadable: false };
  const metricsRegistry = createMetricsRegistry();
  const controller = new AbortController();
  const start = () =>
    MountedContent.start({
      source: 'test-source',
      read: async () => {
        if (state.unreadable) throw new Error('EACCES');
        return state.content;
      },
      build: async (content) => {
        if (content === 'broken') throw new Error('not a number');
        state.builds += 1;
        return Number(content);
      },
      metricsRegistry,
      signal: controller.signal,
    });
  const metric = async (name: string) =>
    metricValue(await metricsRegistry.metrics(), `${name}{source="test-source"}`);
  return { state, metric, start, stop: () => controller.abort() };
}

describe('MountedContent', () => {
  it('swaps in the value built from new content', async () => {
    const { state, start, stop } = source('1');
    const watched = await start();
    expect(watched.current).toBe(1);
    state.content = '2';
    await watched.reload();
    expect(watched.current).toBe(2);
    stop();
  });

  it('does not build again while the content is unchanged', async () => {
    const { state, start, stop } = source('1');
    const watched = await start();
    await watched.reload();
    await watched.reload();
    expect(state.builds).toBe(1);
    stop();
  });

  it('keeps the previous value when new content does not build, says so, and recovers', async () => {
    const { state, start, stop, metric } = source('1');
    const watched = await start();
    state.content = 'broken';
    await watched.reload();
    expect(watched.current).toBe(1);
    expect(await metric('policygrant_credentials_reload_failures_total')).toBe(1);
    expect(await metric('policygrant_credentials_stale')).toBe(1);

    state.content = '3';
    await watched.reload();
    expect(watched.current).toBe(3);
    expect(await metric('policygrant_credentials_stale')).toBe(0);
    stop();
  });

  it('keeps the previous value when the content cannot be read', async () => {
    const { state, start, stop, metric } = source('1');
    const watched = await start();
    state.unreadable = true;
    await watched.reload();
    expect(watched.current).toBe(1);
    expect(await metric('policygrant_credentials_reload_failures_total')).toBe(1);
    stop();
  });

  it('refuses to start on content that does not build', async () => {
    const { start } = source('broken');
    await expect(start()).rejects.toThrow('not a number');
  });
});

describe('readMountedSecret on a volume kubelet updates', () => {
  it('reads the current version, without the keys it removed', async () => {
    const volume = await mkdtemp(join(tmpdir(), 'volume-'));
    await writeKubeletVolume(volume, { gateway: 'first', revoked: 'second' });
    expect(await readMountedSecret(volume)).toEqual({ gateway: 'first', revoked: 'second' });
    await writeKubeletVolume(volume, { gateway: 'rotated' });
    expect(await readMountedSecret(volume)).toEqual({ gateway: 'rotated' });
    await rm(volume, { recursive: true });
  });
});
