import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Registry as MetricsRegistry } from 'prom-client';
import { Controller, TerminalError, watchesMapped } from '../../../src/runtime/controller.js';
import type { ControllerOptions, Reconciler } from '../../../src/runtime/controller.js';
import { Informer } from '../../../src/runtime/informer.js';
import { FakeListWatch } from './support/fake-list-watch.js';

const settle = (): Promise<void> => vi.advanceTimersByTimeAsync(0).then(() => undefined);

/** A promise to resolve by hand, to hold a reconcile in flight. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

async function sample(
  registry: MetricsRegistry,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, want]) => v.labels[k] === want));
  return value?.value ?? Number.NaN;
}

describe('Controller', () => {
  let source: FakeListWatch;
  let informer: Informer<V1ConfigMap>;
  let registry: MetricsRegistry;
  let controller: Controller<V1ConfigMap> | undefined;
  /** Every reconcile call: key and fake-clock time. */
  let calls: { key: string; at: number }[];

  function startController(
    reconcile: Reconciler,
    options: Partial<ControllerOptions<V1ConfigMap>> = {},
  ): Promise<void> {
    controller = new Controller({
      name: 'test',
      for: informer,
      registry,
      reconcile: (key, signal) => {
        calls.push({ key, at: Date.now() });
        return reconcile(key, signal);
      },
      ...options,
    });
    return controller.start();
  }

  const keysCalled = (): string[] => calls.map((call) => call.key);

  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    source = new FakeListWatch();
    informer = new Informer({ source, backoff: { initialMs: 100, maxMs: 1000, jitter: 0 } });
    registry = new MetricsRegistry();
    calls = [];
  });

  afterEach(async () => {
    await controller?.stop(0);
    await informer.stop();
    vi.useRealTimers();
  });

  it('waits for the cache to sync, then reconciles every object once', async () => {
    source.put('a', { v: '1' });
    source.put('b', { v: '1' });
    const started = startController(() => undefined);
    await settle();
    expect(calls).toEqual([]);
    informer.start();
    await started;
    await settle();
    expect(keysCalled().sort()).toEqual(['ns/a', 'ns/b']);
    expect(
      await sample(registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'success' }),
    ).toBe(2);
  });

  it('reconciles again when the object changes', async () => {
    informer.start();
    await startController(() => undefined);
    source.put('a', { v: '1' });
    await settle();
    source.put('a', { v: '2' });
    await settle();
    source.remove('a');
    await settle();
    expect(keysCalled()).toEqual(['ns/a', 'ns/a', 'ns/a']);
  });

  it('retries a failing key with per-key exponential backoff, then forgets it on success', async () => {
    informer.start();
    let failures = 3;
    await startController(() => {
      if (failures-- > 0) {
        throw new Error('not yet');
      }
    });
    source.put('a', { v: '1' });
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.map((call) => call.at - (calls[0]?.at ?? 0))).toEqual([0, 5, 15, 35]);
    expect(
      await sample(registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'error' }),
    ).toBe(3);
    expect(await sample(registry, 'controller_runtime_reconcile_errors_total', { controller: 'test' })).toBe(
      3,
    );
    expect(await sample(registry, 'workqueue_retries_total', { name: 'test' })).toBe(3);

    // Forgotten: the next failure starts again at 5 ms.
    failures = 1;
    source.put('a', { v: '2' });
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.slice(4).map((call) => call.at - (calls[4]?.at ?? 0))).toEqual([0, 5]);
  });

  it('does not retry a TerminalError', async () => {
    informer.start();
    await startController(() => {
      throw new TerminalError('cannot ever work');
    });
    source.put('a', { v: '1' });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls).toHaveLength(1);
    expect(
      await sample(registry, 'controller_runtime_terminal_reconcile_errors_total', { controller: 'test' }),
    ).toBe(1);
  });

  it('honours requeueAfter', async () => {
    informer.start();
    await startController(() => (calls.length < 3 ? { requeueAfter: 1000 } : undefined));
    source.put('a', { v: '1' });
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls.map((call) => call.at - (calls[0]?.at ?? 0))).toEqual([0, 1000, 2000]);
    expect(
      await sample(registry, 'controller_runtime_reconcile_total', {
        controller: 'test',
        result: 'requeue_after',
      }),
    ).toBe(2);
  });

  it('requeue: true retries with the rate limiter', async () => {
    informer.start();
    await startController(() => (calls.length < 3 ? { requeue: true } : undefined));
    source.put('a', { v: '1' });
    await vi.advanceTimersByTimeAsync(100);
    expect(calls.map((call) => call.at - (calls[0]?.at ?? 0))).toEqual([0, 5, 15]);
    expect(
      await sample(registry, 'controller_runtime_reconcile_total', { controller: 'test', result: 'requeue' }),
    ).toBe(2);
  });

  it('never reconciles one key twice at once, and reconciles it again after a change seen meanwhile', async () => {
    informer.start();
    let inFlight = 0;
    let maxInFlight = 0;
    const slow = gate();
    await startController(
      async () => {
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await slow.promise;
        inFlight -= 1;
      },
      { maxConcurrentReconciles: 4 },
    );
    source.put('a', { v: '1' });
    await settle();
    source.put('a', { v: '2' });
    source.put('a', { v: '3' });
    await settle();
    expect(calls).toHaveLength(1);
    slow.open();
    await settle();
    expect(calls).toHaveLength(2);
    expect(maxInFlight).toBe(1);
  });

  it('reconciles different keys in parallel, up to maxConcurrentReconciles', async () => {
    informer.start();
    const slow = gate();
    await startController(() => slow.promise, { maxConcurrentReconciles: 2 });
    source.put('a', { v: '1' });
    source.put('b', { v: '1' });
    source.put('c', { v: '1' });
    await settle();
    expect(keysCalled()).toEqual(['ns/a', 'ns/b']);
    expect(await sample(registry, 'controller_runtime_active_workers', { controller: 'test' })).toBe(2);
    expect(
      await sample(registry, 'controller_runtime_max_concurrent_reconciles', { controller: 'test' }),
    ).toBe(2);
    slow.open();
    await settle();
    expect(keysCalled()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    expect(await sample(registry, 'controller_runtime_active_workers', { controller: 'test' })).toBe(0);
  });

  it('re-enqueues every cached key each resync period', async () => {
    source.put('a', { v: '1' });
    source.put('b', { v: '1' });
    informer.start();
    await startController(() => undefined, { resyncPeriodMs: 60_000 });
    await settle();
    expect(calls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(60_000 * 1.1);
    expect(keysCalled().slice(2).sort()).toEqual(['ns/a', 'ns/b']);
    await vi.advanceTimersByTimeAsync(60_000 * 1.1);
    expect(calls).toHaveLength(6);
  });

  it('maps events of a watched kind to primary keys', async () => {
    const otherSource = new FakeListWatch();
    const other = new Informer<V1ConfigMap>({ source: otherSource });
    other.start();
    informer.start();
    await startController(() => undefined, {
      watches: [watchesMapped(other, (obj) => [`ns/${obj.data?.owner ?? ''}`])],
    });
    otherSource.put('x', { owner: 'a' });
    await settle();
    otherSource.put('x', { owner: 'b' });
    await settle();
    expect(keysCalled()).toEqual(['ns/a', 'ns/a', 'ns/b']);
    await other.stop();
  });

  it('enqueue reconciles a key on demand', async () => {
    informer.start();
    await startController(() => undefined);
    controller?.enqueue('ns/drifted');
    await settle();
    expect(keysCalled()).toEqual(['ns/drifted']);
  });

  it('graceful stop takes no new keys and resolves when the reconcile in flight has finished', async () => {
    informer.start();
    const slow = gate();
    let finished = false;
    await startController(async () => {
      await slow.promise;
      finished = true;
    });
    source.put('a', { v: '1' });
    source.put('b', { v: '1' });
    await settle();
    let stopped = false;
    const stopping = controller?.stop(30_000).then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(1000);
    expect(stopped).toBe(false);
    slow.open();
    await stopping;
    expect(finished).toBe(true);
    expect(keysCalled()).toEqual(['ns/a']);
    expect(controller?.isRunning()).toBe(false);
    source.put('c', { v: '1' });
    await settle();
    expect(keysCalled()).toEqual(['ns/a']);
  });

  it('gives up waiting at the shutdown deadline and aborts the reconcile signal', async () => {
    informer.start();
    let seen: AbortSignal | undefined;
    await startController((_key, signal) => {
      seen = signal;
      return new Promise(() => undefined);
    });
    source.put('a', { v: '1' });
    await settle();
    const stopping = controller?.stop(5_000);
    await vi.advanceTimersByTimeAsync(5_000);
    await stopping;
    expect(seen?.aborted).toBe(true);
  });

  it('can start again after a stop and reconciles everything again', async () => {
    source.put('a', { v: '1' });
    informer.start();
    await startController(() => undefined);
    await settle();
    await controller?.stop();
    await controller?.start();
    await settle();
    expect(keysCalled()).toEqual(['ns/a', 'ns/a']);
  });

  it('a new start waits for a reconcile that outlived the previous shutdown deadline', async () => {
    source.put('a', { v: '1' });
    informer.start();
    const stuck = gate();
    await startController(() => (calls.length === 1 ? stuck.promise : undefined));
    await settle();
    await controller?.stop(0);
    let restarted = false;
    const restarting = controller?.start().then(() => (restarted = true));
    await settle();
    expect(restarted).toBe(false);
    stuck.open();
    await restarting;
    await settle();
    expect(calls).toHaveLength(2);
  });

  it('never runs two reconciles of one key after stop/start/stop/start while a reconcile hangs', async () => {
    source.put('a', { v: '1' });
    informer.start();
    const stuck = gate();
    let inFlight = 0;
    let mostAtOnce = 0;
    await startController(async () => {
      inFlight += 1;
      mostAtOnce = Math.max(mostAtOnce, inFlight);
      if (calls.length === 1) await stuck.promise;
      inFlight -= 1;
    });
    await settle();
    await controller?.stop(0);
    void controller?.start();
    await settle();
    await controller?.stop(0); // the second run never got past waiting for the first one's workers
    const thirdRun = controller?.start();
    await settle();
    source.put('a', { v: '2' });
    await settle();
    expect(calls).toHaveLength(1);
    stuck.open();
    await thirdRun;
    await settle();
    expect(calls).toHaveLength(2);
    expect(mostAtOnce).toBe(1);
  });

  it('records reconcile time in the controller-runtime histogram', async () => {
    informer.start();
    await startController(() => undefined);
    source.put('a', { v: '1' });
    await settle();
    expect(await registry.metrics()).toContain(
      'controller_runtime_reconcile_time_seconds_count{controller="test"} 1',
    );
  });

  it('rejects a worker count below one', () => {
    expect(
      () =>
        new Controller({
          name: 'bad',
          for: informer,
          registry,
          reconcile: () => undefined,
          maxConcurrentReconciles: 0,
        }),
    ).toThrow(/positive integer/);
  });
});
