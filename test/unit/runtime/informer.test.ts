import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeApiError } from '../../../src/kube/api-error.js';
import { Informer } from '../../../src/runtime/informer.js';
import type { InformerOptions } from '../../../src/runtime/informer.js';
import { FakeListWatch } from './support/fake-list-watch.js';

type Event = ['add' | 'delete', string, string?] | ['update', string, string, string];

/** Records handler calls as compact tuples: kind, name, data.v (and the old data.v for updates). */
function record(informer: Informer<V1ConfigMap>): Event[] {
  const events: Event[] = [];
  const name = (obj: V1ConfigMap): string => obj.metadata?.name ?? '?';
  informer.addEventHandler({
    onAdd: (obj) => events.push(['add', name(obj), obj.data?.v]),
    onUpdate: (old, current) =>
      events.push(['update', name(current), old.data?.v ?? '', current.data?.v ?? '']),
    onDelete: (obj) => events.push(['delete', name(obj), obj.data?.v]),
  });
  return events;
}

const settle = (): Promise<void> => vi.advanceTimersByTimeAsync(0).then(() => undefined);

describe('Informer', () => {
  let source: FakeListWatch;
  let informer: Informer<V1ConfigMap>;

  function startInformer(options: Partial<InformerOptions<V1ConfigMap>> = {}): Event[] {
    informer = new Informer({
      source,
      backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
      stallTimeoutMs: 60_000,
      watchTimeoutSeconds: 300,
      ...options,
    });
    const events = record(informer);
    informer.start();
    return events;
  }

  /** Synced, and the watch that follows the list is open. */
  async function synced(): Promise<void> {
    await informer.waitForSync();
    await settle();
  }

  beforeEach(() => {
    vi.useFakeTimers();
    source = new FakeListWatch();
  });

  afterEach(async () => {
    await informer?.stop();
    vi.useRealTimers();
  });

  it('lists, fills the cache, reports synced, then watches from the list resourceVersion', async () => {
    source.put('a', { v: '1' });
    const events = startInformer({ labelSelector: 'app=x', fieldSelector: 'metadata.name!=z' });
    expect(informer.hasSynced()).toBe(false);
    await synced();
    expect(informer.hasSynced()).toBe(true);
    expect(events).toEqual([['add', 'a', '1']]);
    expect(informer.get('ns/a')?.data).toEqual({ v: '1' });
    expect(source.listCalls[0]).toMatchObject({ labelSelector: 'app=x', fieldSelector: 'metadata.name!=z' });
    expect(source.lastWatch().options).toEqual({
      resourceVersion: '101',
      timeoutSeconds: 300,
      allowWatchBookmarks: true,
      labelSelector: 'app=x',
      fieldSelector: 'metadata.name!=z',
    });
  });

  it('applies watch events to the cache and handlers, and tracks their resourceVersion', async () => {
    const events = startInformer();
    await synced();
    source.put('a', { v: '1' });
    source.put('a', { v: '2' });
    source.put('b', { v: '1' });
    source.remove('a');
    expect(events).toEqual([
      ['add', 'a', '1'],
      ['update', 'a', '1', '2'],
      ['add', 'b', '1'],
      ['delete', 'a', '2'],
    ]);
    expect(informer.keys()).toEqual(['ns/b']);
    expect(informer.list('ns').map((o) => o.metadata?.name)).toEqual(['b']);
    expect(informer.list('other')).toEqual([]);
    expect(informer.lastSyncResourceVersion()).toBe('104');
  });

  it('transforms every object before caching it or calling handlers: listed, added, updated and deleted', async () => {
    source.put('a', { v: '1' });
    const seen: string[] = [];
    const transform = (obj: V1ConfigMap): V1ConfigMap => {
      seen.push(obj.data?.v ?? '');
      return { ...obj, data: { v: `${obj.data?.v}!` } };
    };
    const events = startInformer({ transform });
    await synced();
    source.put('a', { v: '2' });
    source.put('b', { v: '1' });
    source.remove('b');
    expect(source.listCalls[0]?.transform).toBe(transform);
    expect(seen).toEqual(['1', '2', '1', '1']);
    expect(events).toEqual([
      ['add', 'a', '1!'],
      ['update', 'a', '1!', '2!'],
      ['add', 'b', '1!'],
      ['delete', 'b', '1!'],
    ]);
    expect(informer.get('ns/a')?.data).toEqual({ v: '2!' });
  });

  it('moves its resourceVersion on bookmarks without emitting events', async () => {
    const events = startInformer();
    await synced();
    source.bookmark();
    expect(informer.lastSyncResourceVersion()).toBe('101');
    expect(events).toEqual([]);
  });

  it('on 410 Gone relists at once and delivers what changed meanwhile, deletes with the last known object', async () => {
    source.put('kept', { v: '1' });
    source.put('changed', { v: '1' });
    source.put('deleted', { v: '1' });
    const events = startInformer();
    await synced();
    events.length = 0;

    source.put('changed', { v: '2' }, { silently: true });
    source.remove('deleted', { silently: true });
    source.put('created', { v: '1' }, { silently: true });
    source.closeWatches(new KubeApiError(410, 'Expired', 'too old resource version'));
    await settle();

    expect(source.listCalls).toHaveLength(2);
    expect(events).toEqual([
      ['delete', 'deleted', '1'],
      ['add', 'created', '1'],
      ['update', 'changed', '1', '2'],
    ]);
    expect(informer.keys().sort()).toEqual(['ns/changed', 'ns/created', 'ns/kept']);
    expect(source.lastWatch().options.resourceVersion).toBe('106');
    expect(source.activeWatches()).toHaveLength(1);
  });

  it('treats a 410 ERROR event inside the stream like a 410 answer', async () => {
    const events = startInformer();
    await synced();
    source.put('missed', { v: '1' }, { silently: true });
    source.sendError({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    await settle();
    expect(source.listCalls).toHaveLength(2);
    expect(events).toEqual([['add', 'missed', '1']]);
  });

  it('after a network error waits with backoff, relists and delivers what was missed', async () => {
    source.put('a', { v: '1' });
    const events = startInformer();
    await synced();
    events.length = 0;

    source.remove('a', { silently: true });
    source.closeWatches(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    await settle();
    expect(source.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(source.listCalls).toHaveLength(2);
    expect(events).toEqual([['delete', 'a', '1']]);
    expect(source.activeWatches()).toHaveLength(1);
  });

  it('backs off exponentially while the API server stays unreachable, and recovers', async () => {
    source.listFailures.push(new Error('ECONNREFUSED'), new Error('ECONNREFUSED'), new Error('ECONNREFUSED'));
    source.put('a', { v: '1' });
    const events = startInformer();
    await settle();
    expect(source.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(source.listCalls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(199);
    expect(source.listCalls).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(source.listCalls).toHaveLength(3);
    expect(informer.hasSynced()).toBe(false);
    await vi.advanceTimersByTimeAsync(400);
    expect(informer.hasSynced()).toBe(true);
    expect(events).toEqual([['add', 'a', '1']]);
  });

  it('re-watches from the last resourceVersion when the server ends a watch normally, without relisting', async () => {
    startInformer();
    await synced();
    source.put('a', { v: '1' });
    await vi.advanceTimersByTimeAsync(5000);
    source.closeWatches();
    await settle();
    expect(source.listCalls).toHaveLength(1);
    expect(source.watches).toHaveLength(2);
    expect(source.lastWatch().options.resourceVersion).toBe('101');
  });

  it('takes a watch that ends at once without any event for a failure (no hot loop)', async () => {
    startInformer();
    await synced();
    source.closeWatches();
    await settle();
    expect(source.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(source.listCalls).toHaveLength(2);
    expect(source.watches).toHaveLength(2);
  });

  it('reopens a watch that stays silent past the stall timeout, from the last resourceVersion', async () => {
    startInformer({ stallTimeoutMs: 10_000 });
    await synced();
    await vi.advanceTimersByTimeAsync(9_000);
    source.bookmark();
    await vi.advanceTimersByTimeAsync(9_000);
    expect(source.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(source.watches).toHaveLength(2);
    expect(source.watches[0]?.stopped).toBe(true);
    expect(source.lastWatch().options.resourceVersion).toBe('101');
    expect(source.listCalls).toHaveLength(1);
  });

  it('by default asks for a 60–120 s watch and takes it as stalled 30 s past that', async () => {
    startInformer({ stallTimeoutMs: undefined, watchTimeoutSeconds: undefined });
    await synced();
    const timeoutSeconds = source.lastWatch().options.timeoutSeconds;
    expect(timeoutSeconds).toBeGreaterThanOrEqual(60);
    expect(timeoutSeconds).toBeLessThan(120);
    await vi.advanceTimersByTimeAsync(timeoutSeconds * 1000 + 29_000);
    expect(source.watches).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(source.watches).toHaveLength(2);
  });

  it('relists with backoff after a non-410 ERROR event', async () => {
    startInformer();
    await synced();
    source.sendError({ code: 500, reason: 'InternalError', message: 'boom' });
    await settle();
    expect(source.listCalls).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(source.listCalls).toHaveLength(2);
  });

  it('keeps going when a handler throws, and other handlers still get the event', async () => {
    startInformer();
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    const events = record(informer);
    await synced();
    source.put('a', { v: '1' });
    source.put('b', { v: '1' });
    expect(events.map(([, name]) => name)).toEqual(['a', 'b']);
    expect(source.activeWatches()).toHaveLength(1);
  });

  it('replays the cache as adds to a handler added late, and stops calling a removed one', async () => {
    source.put('a', { v: '1' });
    startInformer();
    await synced();
    const late: string[] = [];
    const remove = informer.addEventHandler({ onAdd: (obj) => late.push(obj.metadata?.name ?? '') });
    expect(late).toEqual(['a']);
    remove();
    source.put('b', { v: '1' });
    expect(late).toEqual(['a']);
  });

  it('keeps indexes current through watch events and relists', async () => {
    source.put('a', { v: 'red' });
    startInformer();
    informer.addIndex('v', (obj) => (obj.data?.v ? [obj.data.v] : []));
    await synced();
    const named = (value: string): string[] =>
      informer.byIndex('v', value).map((o) => o.metadata?.name ?? '');
    expect(named('red')).toEqual(['a']);
    source.put('b', { v: 'red' });
    source.put('a', { v: 'blue' });
    expect(named('red')).toEqual(['b']);
    expect(named('blue')).toEqual(['a']);
    source.remove('b', { silently: true });
    source.closeWatches(new KubeApiError(410, 'Expired', 'gone'));
    await settle();
    expect(named('red')).toEqual([]);
  });

  it('stops watching on stop, and emits nothing afterwards', async () => {
    const events = startInformer();
    await synced();
    await informer.stop();
    expect(source.activeWatches()).toHaveLength(0);
    source.put('a', { v: '1' });
    expect(events).toEqual([]);
  });

  it('rejects waitForSync when stopped before the first list succeeded', async () => {
    source.listFailures.push(new Error('down'));
    startInformer();
    const waiting = informer.waitForSync();
    await settle();
    await informer.stop();
    await expect(waiting).rejects.toThrow(/stopped before it synced/);
  });

  it('rejects waitForSync when its signal aborts', async () => {
    source.listFailures.push(new Error('down'));
    startInformer();
    const abort = new AbortController();
    const waiting = informer.waitForSync(abort.signal);
    abort.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
  });

  describe('relistNow', () => {
    it('lists again and answers once the cache holds what its watch never delivered', async () => {
      source.put('a', { v: '1' });
      const events = startInformer();
      await synced();
      source.remove('a', { silently: true }); // the watch lags: its connection is slow or cut
      source.put('b', { v: '1' }, { silently: true });
      expect(informer.get('ns/a')).toBeDefined();

      await informer.relistNow();
      expect(source.listCalls).toHaveLength(2);
      expect(informer.get('ns/a')).toBeUndefined();
      expect(informer.get('ns/b')?.data).toEqual({ v: '1' });
      expect(events).toEqual([
        ['add', 'a', '1'],
        ['delete', 'a', '1'],
        ['add', 'b', '1'],
      ]);
      expect(source.watches[0]?.stopped).toBe(true);
      await settle();
      expect(source.lastWatch().options.resourceVersion).toBe(informer.lastSyncResourceVersion());
    });

    it('answers a caller only with a list sent after its call, retrying failed lists', async () => {
      startInformer();
      await synced();
      source.listFailures.push(new Error('API server unreachable'));
      let answered = false;
      const relisted = informer.relistNow().then(() => (answered = true));
      await settle();
      expect(source.listCalls).toHaveLength(2); // failed
      expect(answered).toBe(false);
      source.put('c', { v: '1' }, { silently: true });
      await vi.advanceTimersByTimeAsync(100); // the backoff
      await relisted;
      expect(source.listCalls).toHaveLength(3);
      expect(informer.get('ns/c')).toBeDefined();
    });

    it('rejects when its signal aborts or the informer stops', async () => {
      startInformer();
      await synced();
      source.listFailures.push(new Error('down'), new Error('down'));
      const abort = new AbortController();
      const aborted = informer.relistNow(abort.signal);
      abort.abort();
      await expect(aborted).rejects.toThrow(/aborted/);
      const stopped = informer.relistNow();
      const stopping = informer.stop();
      await expect(stopped).rejects.toThrow(/stopped/);
      await stopping;
    });
  });
});
