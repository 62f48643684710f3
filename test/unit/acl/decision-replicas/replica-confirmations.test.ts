import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { staticReplicas } from '../../../../src/acl/decision-replicas/decision-replicas.js';
import { ReplicaConfirmations } from '../../../../src/acl/decision-replicas/replica-confirmations.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';
import { capturedLogger } from '../../http/support/serve.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A replica's GET /watch/passed: passes the token once `passesAfter` requests were answered. */
async function replica(
  passesAfter: number,
  status = 200,
): Promise<{ url: string; asked: URLSearchParams[] }> {
  const asked: URLSearchParams[] = [];
  const server = createServer((request, response) => {
    const query = new URL(request.url ?? '', 'http://replica').searchParams;
    asked.push(query);
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ passed: asked.length > passesAfter, watchCurrent: true }));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, asked };
}

function confirmations(urls: readonly string[] | undefined) {
  const logs = capturedLogger();
  const metricsRegistry = createMetricsRegistry();
  const replicas = { ...staticReplicas([]), ready: () => urls };
  return {
    logs,
    metricsRegistry,
    confirming: new ReplicaConfirmations({ replicas, logger: logs.logger, metricsRegistry }),
  };
}

describe('asking every Ready decision replica', () => {
  it('asks each replica again until it confirms the token, each request waiting at most a second', async () => {
    const [quick, slow] = [await replica(0), await replica(2)];
    const { confirming, metricsRegistry } = confirmations([quick.url, slow.url]);
    expect(await confirming.confirm('GhUKEzE3', performance.now() + 60_000)).toEqual({ ready: 2, passed: 2 });
    expect(quick.asked.map((query) => query.get('zed_token'))).toEqual(['GhUKEzE3']);
    expect(slow.asked).toHaveLength(3);
    expect(slow.asked.every((query) => query.get('wait_ms') === '1000')).toBe(true);
    expect(
      await metricsRegistry.getSingleMetricAsString('policygrant_acl_decision_replica_confirmations_total'),
    ).toContain('outcome="passed"} 2');
  });

  it('counts a replica that does not confirm by the deadline, or fails, as not passed, and logs them', async () => {
    const [confirms, never, broken] = [await replica(0), await replica(Infinity), await replica(0, 503)];
    const { confirming, logs } = confirmations([confirms.url, never.url, broken.url]);
    expect(await confirming.confirm('GhUKEzE3', performance.now() + 300)).toEqual({ ready: 3, passed: 1 });
    expect(never.asked.length).toBeGreaterThan(0);
    expect(Number(never.asked[0]?.get('wait_ms'))).toBeLessThanOrEqual(300);
    expect(logs.lines()).toContainEqual(
      expect.objectContaining({ unconfirmed: [never.url, broken.url], ready: 3 }),
    );
  });

  it('confirms nothing while the replicas are unknown', async () => {
    const { confirming } = confirmations(undefined);
    expect(await confirming.confirm('GhUKEzE3', performance.now() + 60_000)).toEqual({ ready: 0, passed: 0 });
  });
});
