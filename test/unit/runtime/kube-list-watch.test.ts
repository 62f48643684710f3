import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { KubeApiError } from '../../../src/kube/api-error.js';
import { kubeLeaseClient } from '../../../src/kube/lease-client.js';
import { kubeListWatch } from '../../../src/kube/list-watch.js';
import type { WatchEvent } from '../../../src/kube/list-watch.js';
import { FakeHttpApi, sendJson, startStream } from './support/fake-http-api.js';
import { until } from '../../../dev/wait/until.js';
import { sleep } from '../../../dev/wait/sleep.js';

const PATH = '/api/v1/namespaces/ns/configmaps';
const cm = (name: string, resourceVersion: string): V1ConfigMap => ({
  metadata: { name, namespace: 'ns', resourceVersion },
});

interface Recorded {
  events: WatchEvent<V1ConfigMap>[];
  closed: unknown[];
}

function watchInto(kube: KubeClient, resourceVersion = '10'): Recorded & { stop: () => void } {
  const recorded: Recorded = { events: [], closed: [] };
  const stop = kubeListWatch<V1ConfigMap>(kube, PATH).watch(
    { resourceVersion, timeoutSeconds: 300, allowWatchBookmarks: true, labelSelector: 'app=x' },
    {
      onEvent: (event) => recorded.events.push(event),
      onClose: (error) => recorded.closed.push(error ?? 'normal'),
    },
  );
  return { ...recorded, stop };
}

/** Two list pages: `a`, then `b`, at resourceVersion 12. */
function serveTwoPages(api: FakeHttpApi): void {
  api.route = (_req, url, res) =>
    url.searchParams.get('continue') === 'page2'
      ? sendJson(res, 200, { metadata: { resourceVersion: '12' }, items: [cm('b', '11')] })
      : sendJson(res, 200, {
          metadata: { resourceVersion: '12', continue: 'page2' },
          items: [cm('a', '10')],
        });
}

describe('kubeListWatch over HTTP', () => {
  let api: FakeHttpApi;
  let kube: KubeClient;

  beforeEach(async () => {
    api = new FakeHttpApi();
    kube = new KubeClient(await api.listen());
  });

  afterEach(() => api.close());

  it('lists every page with the selectors and the bearer token, and returns the last resourceVersion', async () => {
    serveTwoPages(api);
    const result = await kubeListWatch<V1ConfigMap>(kube, PATH).list({
      labelSelector: 'app=x',
      fieldSelector: 'a=b',
    });
    expect(result.items.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
    expect(result.resourceVersion).toBe('12');
    expect(api.requests).toHaveLength(2);
    const [first] = api.requests;
    expect(first?.url.pathname).toBe(PATH);
    expect(Object.fromEntries(first?.url.searchParams ?? [])).toEqual({
      labelSelector: 'app=x',
      fieldSelector: 'a=b',
      limit: '500',
    });
    expect(first?.authorization).toBe('Bearer secret-token');
  });

  it('applies the transform to each item of every page', async () => {
    serveTwoPages(api);
    const result = await kubeListWatch<V1ConfigMap>(kube, PATH).list({
      transform: (obj) => ({ ...obj, data: { seen: 'yes' } }),
    });
    expect(result.items.map((o) => [o.metadata?.name, o.data?.seen])).toEqual([
      ['a', 'yes'],
      ['b', 'yes'],
    ]);
  });

  it('turns an error answer into a KubeApiError with the Status code and reason', async () => {
    api.route = (_req, _url, res) =>
      sendJson(res, 403, {
        kind: 'Status',
        code: 403,
        reason: 'Forbidden',
        message: 'configmaps is forbidden',
      });
    const failure = kubeListWatch(kube, PATH).list({});
    await expect(failure).rejects.toBeInstanceOf(KubeApiError);
    await expect(failure).rejects.toMatchObject({
      statusCode: 403,
      reason: 'Forbidden',
      message: 'configmaps is forbidden',
    });
  });

  it('streams watch events, even when a line is split across chunks, and reports a normal end', async () => {
    api.route = (_req, _url, res) => {
      startStream(res);
      const line = JSON.stringify({ type: 'ADDED', object: cm('a', '11') });
      res.write(line.slice(0, 10));
      setTimeout(() => {
        res.write(
          `${line.slice(10)}\n${JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } })}\n`,
        );
        res.end();
      }, 20);
    };
    const watch = watchInto(kube);
    await until(() => watch.closed.length > 0);
    expect(watch.events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(watch.closed).toEqual(['normal']);
    const query = Object.fromEntries(api.requests[0]?.url.searchParams ?? []);
    expect(query).toEqual({
      watch: 'true',
      resourceVersion: '10',
      timeoutSeconds: '300',
      allowWatchBookmarks: 'true',
      labelSelector: 'app=x',
    });
  });

  it('reports a 410 answer to the watch request as a KubeApiError 410', async () => {
    api.route = (_req, _url, res) =>
      sendJson(res, 410, { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    const watch = watchInto(kube, '1');
    await until(() => watch.closed.length > 0);
    expect(watch.closed[0]).toMatchObject({ statusCode: 410, reason: 'Expired' });
  });

  it('reports a connection cut mid-stream as an error', async () => {
    api.route = (_req, _url, res) => startStream(res)({ type: 'ADDED', object: cm('a', '11') });
    const watch = watchInto(kube);
    await until(() => watch.events.length === 1);
    api.dropConnections();
    await until(() => watch.closed.length > 0);
    expect(watch.closed[0]).toBeInstanceOf(Error);
  });

  it('ends the watch with an error on an unparsable line', async () => {
    api.route = (_req, _url, res) => {
      startStream(res);
      res.write('{not json\n');
    };
    const watch = watchInto(kube);
    await until(() => watch.closed.length > 0);
    expect(watch.closed[0]).toBeInstanceOf(SyntaxError);
  });

  it('can be stopped while the server has not even answered, closing the connection, with no callback', async () => {
    api.route = () => undefined; // never answers
    const watch = watchInto(kube);
    await until(() => api.openResponses().length === 1);
    watch.stop();
    await until(() => api.openResponses().length === 0);
    await sleep(50);
    expect(watch.closed).toEqual([]);
  });
});

describe('kubeLeaseClient over HTTP', () => {
  let api: FakeHttpApi;
  let kube: KubeClient;
  const LEASE = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';

  beforeEach(async () => {
    api = new FakeHttpApi();
    kube = new KubeClient(await api.listen());
  });

  afterEach(() => api.close());

  it('returns undefined for a missing lease and creates it with a POST', async () => {
    api.route = (req, _url, res) =>
      req.method === 'GET'
        ? sendJson(res, 404, { kind: 'Status', code: 404, reason: 'NotFound' })
        : sendJson(res, 201, { metadata: { name: 'l', namespace: 'ns', resourceVersion: '1' }, spec: {} });
    const client = kubeLeaseClient(kube, 'ns', 'l');
    expect(await client.get()).toBeUndefined();
    const created = await client.create({ holderIdentity: 'me', leaseDurationSeconds: 15 });
    expect(created.metadata.resourceVersion).toBe('1');
    const post = api.requests[1];
    expect(post?.method).toBe('POST');
    expect(post?.url.pathname).toBe(LEASE);
    expect(JSON.parse(post?.body ?? '')).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', namespace: 'ns' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15 },
    });
  });

  it('updates with a PUT carrying the resourceVersion, and surfaces a 409', async () => {
    api.route = (_req, _url, res) => sendJson(res, 409, { kind: 'Status', code: 409, reason: 'Conflict' });
    const client = kubeLeaseClient(kube, 'ns', 'l');
    const lease = {
      metadata: { name: 'l', namespace: 'ns', resourceVersion: '7' },
      spec: { holderIdentity: 'me' },
    };
    await expect(client.update(lease)).rejects.toMatchObject({ statusCode: 409 });
    expect(api.requests[0]?.method).toBe('PUT');
    expect(api.requests[0]?.url.pathname).toBe(`${LEASE}/l`);
    expect(JSON.parse(api.requests[0]?.body ?? '').metadata.resourceVersion).toBe('7');
  });
});
