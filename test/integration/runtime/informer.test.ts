import { afterEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Informer } from '../../../src/runtime/informer.js';
import { kubeListWatch } from '../../../src/kube/list-watch.js';
import { createTestNamespace, testKubeClient } from '../support/cluster.js';
import { CONFIG_MAP_RESOURCE, TestObjects } from '../support/objects.js';
import { SabotagedSource } from './sabotaged-source.js';
import { until } from '../../../dev/wait/until.js';

type Seen = [string, string, string?];

describe('Informer against the real kube-apiserver (ConfigMaps)', () => {
  const objects = new TestObjects();
  let namespace: string;
  let informer: Informer<V1ConfigMap>;
  let seen: Seen[];

  const path = (): string => `/api/v1/namespaces/${namespace}/configmaps`;
  const put = async (name: string, v: string): Promise<void> => {
    const body = { metadata: { name, labels: { test: 'runtime' } }, data: { v } };
    try {
      await objects.replace(CONFIG_MAP_RESOURCE, name, body, namespace);
    } catch {
      await objects.create(CONFIG_MAP_RESOURCE, body, namespace);
    }
  };
  const remove = (name: string): Promise<unknown> => objects.delete(CONFIG_MAP_RESOURCE, name, namespace);

  function startInformer(source = kubeListWatch<V1ConfigMap>(testKubeClient(), path())): void {
    informer = new Informer({
      source,
      name: 'configmaps',
      labelSelector: 'test=runtime',
      backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
    });
    informer.addEventHandler({
      onAdd: (obj) => seen.push(['add', obj.metadata?.name ?? '', obj.data?.v]),
      onUpdate: (_old, obj) => seen.push(['update', obj.metadata?.name ?? '', obj.data?.v]),
      onDelete: (obj) => seen.push(['delete', obj.metadata?.name ?? '', obj.data?.v]),
    });
    informer.start();
  }

  const has = (event: Seen): boolean => seen.some((s) => JSON.stringify(s) === JSON.stringify(event));

  /** The cache agrees with the server: same names, same resourceVersions. */
  async function expectCacheMatchesServer(): Promise<void> {
    const listed = await testKubeClient().call<{ items: V1ConfigMap[] }>({
      method: 'GET',
      path: path(),
      query: { labelSelector: 'test=runtime' },
    });
    const server = Object.fromEntries(
      listed.items.map((cm) => [`${namespace}/${cm.metadata?.name}`, cm.metadata?.resourceVersion]),
    );
    await until(
      () =>
        JSON.stringify(
          Object.fromEntries(
            informer
              .keys()
              .sort()
              .map((k) => [k, informer.get(k)?.metadata?.resourceVersion]),
          ),
        ) === JSON.stringify(Object.fromEntries(Object.entries(server).sort())),
      'the cache to match the server',
    );
  }

  afterEach(async () => {
    await informer?.stop();
  });

  it('lists, then sees creates, updates and deletes through the watch, with an index kept current', async () => {
    namespace = await createTestNamespace('rt-informer');
    seen = [];
    await put('before', '1');
    await objects.create(
      CONFIG_MAP_RESOURCE,
      { metadata: { name: 'unlabelled' }, data: { v: 'x' } },
      namespace,
    );
    startInformer();
    informer.addIndex('v', (cm) => (cm.data?.v ? [cm.data.v] : []));
    await informer.waitForSync();
    expect(seen).toEqual([['add', 'before', '1']]);

    await put('a', '1');
    await put('a', '2');
    await remove('before');
    await until(() => has(['delete', 'before', '1']), 'the delete');
    expect(seen).toEqual([
      ['add', 'before', '1'],
      ['add', 'a', '1'],
      ['update', 'a', '2'],
      ['delete', 'before', '1'],
    ]);
    expect(informer.byIndex('v', '2').map((cm) => cm.metadata?.name)).toEqual(['a']);
    expect(informer.byIndex('v', '1')).toEqual([]);
    await expectCacheMatchesServer();
  });

  it('after its connection is cut, recovers by relisting and loses none of the changes made meanwhile', async () => {
    namespace = await createTestNamespace('rt-informer-cut');
    seen = [];
    await put('kept', '1');
    await put('changed', '1');
    await put('deleted', '1');
    const source = new SabotagedSource(kubeListWatch<V1ConfigMap>(testKubeClient(), path()));
    startInformer(source);
    await informer.waitForSync();
    await until(() => source.watches === 1, 'the watch to open');

    source.disconnect(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    await put('changed', '2');
    await remove('deleted');
    await put('created', '1');
    seen = [];
    source.reconnect();

    await until(() => seen.length === 3, 'the three missed changes');
    expect(seen).toEqual(
      expect.arrayContaining([
        ['update', 'changed', '2'],
        ['delete', 'deleted', '1'],
        ['add', 'created', '1'],
      ]),
    );
    expect(source.lists).toBe(2);
    await put('after', '1');
    await until(() => has(['add', 'after', '1']), 'an event on the new watch');
    await expectCacheMatchesServer();
  });

  it('when its resourceVersion has expired (410 Gone), relists and delivers what changed', async () => {
    namespace = await createTestNamespace('rt-informer-410');
    seen = [];
    await put('changed', '1');
    await put('deleted', '1');
    const source = new SabotagedSource(kubeListWatch<V1ConfigMap>(testKubeClient(), path()));
    startInformer(source);
    await informer.waitForSync();
    await put('warm-up', '1'); // an event on the first watch, so its normal end below counts as healthy
    await until(() => has(['add', 'warm-up', '1']), 'the warm-up event');

    source.expireNextWatch();
    source.disconnect(); // a normal end: the informer re-watches from its resourceVersion, and gets the 410
    await put('changed', '2');
    await remove('deleted');
    await put('created', '1');
    seen = [];
    source.reconnect();

    await until(() => seen.length === 3, 'the three missed changes');
    expect(source.goneAnswers).toBe(1);
    expect(source.lists).toBe(2);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['update', 'changed', '2'],
        ['delete', 'deleted', '1'],
        ['add', 'created', '1'],
      ]),
    );
    await expectCacheMatchesServer();
  });

  it('reopens a quiet watch after the stall timeout without losing events', async () => {
    namespace = await createTestNamespace('rt-informer-stall');
    seen = [];
    const source = new SabotagedSource(kubeListWatch<V1ConfigMap>(testKubeClient(), path()));
    informer = new Informer({ source, labelSelector: 'test=runtime', stallTimeoutMs: 1500 });
    informer.addEventHandler({ onAdd: (obj) => seen.push(['add', obj.metadata?.name ?? '']) });
    informer.start();
    await informer.waitForSync();
    await until(() => source.watches >= 2, 'a second watch after the stall timeout');
    await put('late', '1');
    await until(() => has(['add', 'late']), 'the event on the reopened watch');
    expect(source.lists).toBe(1);
  });
});
