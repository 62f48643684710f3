import { afterEach, describe, expect, it } from 'vitest';
import { RevisionBarrier } from '../../../src/decision/revision-barrier.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import type { CheckPermissionInput, WatchEvent, WatchOptions } from '../../../src/spicedb/client.js';
import { GrpcCode, SpiceDBError } from '../../../src/spicedb/errors.js';
import { until } from '../../../dev/wait/until.js';
import { capturedLogger } from '../http/support/serve.js';

const PROBE: CheckPermissionInput = {
  resource: { type: 'resource', id: 'readiness-probe' },
  permission: 'viewer',
  subject: { type: 'user', id: 'readiness-probe' },
};

/**
 * SpiceDB as the barrier reads it: a Watch that delivers `t1`, then (`breaks`) fails ever after, or stays open
 * until stopped.
 */
function spicedbWatch(breaks: boolean) {
  let streams = 0;
  return {
    get streams() {
      return streams;
    },
    async *watch(options: WatchOptions = {}): AsyncGenerator<WatchEvent> {
      streams += 1;
      if (streams === 1) yield { changesThrough: 't1', updates: [], schemaUpdated: false, checkpoint: true };
      if (breaks) throw new SpiceDBError('Watch', GrpcCode.UNAVAILABLE, 'connection reset');
      await new Promise((resolve) => options.signal?.addEventListener('abort', resolve, { once: true }));
    },
    checkPermission: async () => ({ permissionship: 'NO_PERMISSION' as const, checkedAt: 'head-1' }),
    async *readRelationships() {
      // no expiring relationships
    },
  };
}

let barrier: RevisionBarrier | undefined;
afterEach(() => barrier?.stop());

function startBarrier(spicedb: ReturnType<typeof spicedbWatch>) {
  const metricsRegistry = createMetricsRegistry();
  barrier = new RevisionBarrier({
    spicedb: spicedb as never,
    headProbe: PROBE,
    logger: capturedLogger().logger,
    metricsRegistry,
  });
  barrier.start();
  return { barrier, metricsRegistry };
}

describe('confirming a ZedToken', () => {
  it('passes a token its current Watch delivered, waiting for it; not one it never delivered', async () => {
    const { barrier: current } = startBarrier(spicedbWatch(false));
    expect(await current.confirm('t1', 60_000)).toEqual({ passed: true, watchCurrent: true });
    expect(await current.confirm('t2', 10)).toEqual({ passed: false, watchCurrent: true });
  });

  it('a replica whose Watch is down has passed nothing, not even a token it delivered', async () => {
    const spicedb = spicedbWatch(true);
    const { barrier: broken, metricsRegistry } = startBarrier(spicedb);
    await until(() => spicedb.streams >= 2, 'the Watch to break after delivering t1');
    expect(await broken.confirm('t1', 0)).toEqual({ passed: false, watchCurrent: false });
    expect(await broken.confirm('t2', 10)).toEqual({ passed: false, watchCurrent: false });
    const counted = await metricsRegistry.getSingleMetricAsString(
      'policygrant_decision_revision_confirmations_total',
    );
    expect(counted).toContain('outcome="watch_not_current"} 2');
  });
});
