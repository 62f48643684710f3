import { afterEach, describe, expect, it } from 'vitest';
import { GrantMetrics } from '../../../src/controller/controller-metrics.js';
import { ResyncCancelledError, type ResyncReport } from '../../../src/controller/drift-resync.js';
import { ResyncScheduler } from '../../../src/controller/resync-scheduler.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { silentLogger } from '../../../src/runtime/logger.js';
import { sleep } from '../../../dev/wait/sleep.js';

const report: ResyncReport = { examined: 0, desired: 0, missing: 0, orphan: 0, durationMs: 0 };

let scheduler: ResyncScheduler | undefined;
afterEach(() => scheduler?.stop());

function setUp(
  options: {
    periodMs?: number;
    retryBaseMs?: number;
    run?: (isCancelled: () => boolean) => Promise<ResyncReport>;
  } = {},
) {
  const state = { leader: false, synced: true, runs: 0, startedLeading: 0, failures: 0 };
  const metricsRegistry = createMetricsRegistry();
  scheduler = new ResyncScheduler({
    resync: {
      run: async (isCancelled = () => false) => {
        state.runs += 1;
        return options.run ? options.run(isCancelled) : report;
      },
    },
    periodMs: options.periodMs ?? 60_000,
    isLeader: () => state.leader,
    hasSynced: () => state.synced,
    onStartedLeading: () => (state.startedLeading += 1),
    metrics: new GrantMetrics(metricsRegistry, () => []),
    logger: silentLogger,
    pollMs: 5,
    ...(options.retryBaseMs === undefined ? {} : { retryBaseMs: options.retryBaseMs }),
  });
  scheduler.start();
  return { state, scheduler, metricsRegistry };
}

describe('ResyncScheduler', () => {
  it('does nothing while this replica does not lead, or its caches have not synced', async () => {
    const { state } = setUp();
    await sleep(30);
    state.leader = true;
    state.synced = false;
    await sleep(30);
    expect(state.runs).toBe(0);
  });

  it('resyncs at once when it starts leading, after telling the controller', async () => {
    const { state } = setUp();
    state.leader = true;
    await expect.poll(() => state.runs).toBe(1);
    expect(state.startedLeading).toBe(1);
  });

  it('resyncs every period while leading, and again at a new term', async () => {
    const { state } = setUp({ periodMs: 20 });
    state.leader = true;
    await expect.poll(() => state.runs).toBeGreaterThanOrEqual(3);
    state.leader = false;
    await sleep(20);
    state.leader = true;
    await expect.poll(() => state.startedLeading).toBe(2);
  });

  it('resyncs as soon as asked', async () => {
    const { state, scheduler } = setUp();
    state.leader = true;
    await expect.poll(() => state.runs).toBe(1);
    scheduler.requestResync();
    await expect.poll(() => state.runs).toBe(2);
    expect(scheduler.last).toEqual(report);
  });

  it('cancels a run when leadership is lost, and counts failures', async () => {
    let cancelledSeen = false;
    const { state, metricsRegistry } = setUp({
      run: async (isCancelled = () => false) => {
        if (state.runs === 1) {
          state.leader = false;
          cancelledSeen = isCancelled();
          throw new ResyncCancelledError('cancelled');
        }
        throw new Error('SpiceDB down');
      },
      periodMs: 10,
    });
    state.leader = true;
    await expect.poll(() => state.runs).toBe(1);
    expect(cancelledSeen).toBe(true);
    state.leader = true;
    await expect
      .poll(
        async () =>
          (await metricsRegistry.getSingleMetric('policygrant_resync_failures_total')?.get())?.values[0]
            ?.value,
      )
      .toBeGreaterThan(0);
  });

  it('retries a failed run with backoff, not a period later, and returns to the period once one succeeds', async () => {
    const { state } = setUp({
      periodMs: 3_600_000,
      retryBaseMs: 10,
      run: async () => {
        if (state.runs <= 3) throw new Error('SpiceDB lost its schema');
        return report;
      },
    });
    state.leader = true;
    await expect.poll(() => state.runs).toBe(4);
    await sleep(100);
    expect(state.runs, 'after a success, the next run waits for the period').toBe(4);
  });
});
