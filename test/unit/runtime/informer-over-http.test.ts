import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { Informer } from '../../../src/runtime/informer.js';
import { kubeListWatch } from '../../../src/kube/list-watch.js';
import { FakeHttpApi, sendJson, startStream } from './support/fake-http-api.js';
import { until } from '../../../dev/wait/until.js';

// The informer's supervision over real sockets: stalls that only a timeout can see, and a server that dies.

const PATH = '/api/v1/namespaces/ns/configmaps';
const cm = (name: string, resourceVersion: string): V1ConfigMap => ({
  metadata: { name, namespace: 'ns', resourceVersion },
});

describe('Informer over HTTP', () => {
  let api: FakeHttpApi;
  let kube: KubeClient;
  let informer: Informer<V1ConfigMap>;
  let items: V1ConfigMap[];
  const watchRequests = (): URL[] =>
    api.requests.filter((r) => r.url.searchParams.get('watch') === 'true').map((r) => r.url);
  const listRequests = (): URL[] =>
    api.requests.filter((r) => !r.url.searchParams.has('watch')).map((r) => r.url);

  beforeEach(async () => {
    api = new FakeHttpApi();
    kube = new KubeClient(await api.listen());
    items = [cm('a', '5')];
  });

  afterEach(async () => {
    await informer.stop();
    await api.close();
  });

  function start(onWatch: (res: Parameters<typeof startStream>[0]) => void): void {
    api.route = (_req, url, res) =>
      url.searchParams.get('watch') === 'true'
        ? onWatch(res)
        : sendJson(res, 200, { metadata: { resourceVersion: '9' }, items });
    informer = new Informer({
      source: kubeListWatch(kube, PATH),
      stallTimeoutMs: 200,
      backoff: { initialMs: 50, maxMs: 100, jitter: 0 },
    });
    informer.start();
  }

  it('reopens a watch whose server sent the headers and then fell silent', async () => {
    start((res) => startStream(res));
    await until(() => watchRequests().length >= 2);
    expect(watchRequests().every((url) => url.searchParams.get('resourceVersion') === '9')).toBe(true);
    expect(listRequests()).toHaveLength(1);
    await until(() => api.openResponses().length <= 1);
  });

  it('gives up on a watch request that never gets an answer', async () => {
    start(() => undefined);
    await until(() => watchRequests().length >= 2);
    await until(() => api.openResponses().length <= 1);
    expect(listRequests()).toHaveLength(1);
  });

  it('after the server dropped every connection, relists and delivers a delete it missed', async () => {
    const deleted: string[] = [];
    start((res) => startStream(res));
    informer.addEventHandler({ onDelete: (obj) => deleted.push(obj.metadata?.name ?? '') });
    await informer.waitForSync();
    await until(() => watchRequests().length === 1);
    items = [];
    api.dropConnections();
    await until(() => deleted.length === 1);
    expect(deleted).toEqual(['a']);
    expect(informer.keys()).toEqual([]);
    expect(listRequests()).toHaveLength(2);
  });
});
