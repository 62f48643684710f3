import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relationship } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { until } from '../../../../dev/wait/until.js';
import { makeStateDir } from '../../controller/support/harness.js';
import { repoRoot } from '../../../../dev/localplane/repo-root.js';
import { GATEWAY_CONFIG_DIR, startNginxGateway, type NginxGateway } from '../support/nginx-gateway.js';
import { startServiceOnOwnSpiceDB, type ServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// The gateway configuration of docs/gateway/nginx, run as the docs show it: nginx (Debian's, with njs) asks the
// decision service's POST /access/v1/evaluation in an auth_request before it proxies to a data service.
// A SpiceDB and decision service of the file's own: the outage test stops the service (after the tests that need it).
const ITEM = 'urn:dx:item:gateway-42';
const UPSTREAM_BODY = 'data of the item';

let own: ServiceOnOwnSpiceDB;
let upstream: Server;
let gateway: NginxGateway;
let stateDir: string;

const grant = (userId: string): Relationship => ({
  resource: { type: 'resource', id: encodeObjectId(ITEM) },
  relation: 'api_consumer',
  subject: { type: 'user', id: encodeObjectId(userId) },
  expiresAt: new Date(Date.now() + 3_600_000),
});

/** A request through the gateway for `user` on the item. */
async function through(user: string, method = 'GET'): Promise<{ status: number; body: string }> {
  const response = await fetch(`${gateway.url}/items/${encodeURIComponent(ITEM)}/rows?limit=5`, {
    method,
    headers: { 'x-authenticated-user': user },
  });
  return { status: response.status, body: await response.text() };
}

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('nginx-gateway');
  // The outage test stops the service and afterAll's own.stop() stops it again: the second stop is the first's.
  const stopService = own.service.stop.bind(own.service);
  let stopped: Promise<void> | undefined;
  own.service.stop = () => (stopped ??= stopService());
  upstream = createServer((_request, response) => response.end(UPSTREAM_BODY));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  stateDir = await makeStateDir('nginx-gateway');
  gateway = await startNginxGateway({
    stateDir,
    upstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    evaluationUrl: `${own.service.url}/access/v1/evaluation`,
    authorization: own.service.authorization,
  });
  await until(
    async () => (await through('nobody').catch(() => undefined))?.status === 403,
    'nginx to answer',
  ).catch(async (error: unknown) => {
    const log = await readFile(join(stateDir, 'error.log'), 'utf8').catch(() => '');
    throw new Error(`${String(error)}; nginx's error log:\n${log}`, { cause: error });
  });
  await own.service.afterWatchDelivers(() =>
    own.spicedb.client.writeRelationships([{ operation: 'touch', relationship: grant('alice') }]),
  );
});

afterAll(async () => {
  await gateway?.process.stop();
  if (upstream) await new Promise((resolve) => upstream.close(resolve));
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
  await own?.stop();
});

describe('nginx with the docs’ AuthZEN configuration proxies only what the decision service permits', () => {
  it('proxies a granted pair: 200 with the data service’s body', async () => {
    expect(await through('alice')).toEqual({ status: 200, body: UPSTREAM_BODY });
  });

  it('denies an ungranted pair, a write the grant does not cover, and a request without a subject: 403', async () => {
    expect((await through('bob')).status).toBe(403);
    expect((await through('alice', 'DELETE')).status).toBe(403);
    const anonymous = await fetch(`${gateway.url}/items/${encodeURIComponent(ITEM)}/rows`);
    expect(anonymous.status).toBe(403);
  });

  it('denies a grant right after its revocation reached the decision service', async () => {
    await own.service.afterWatchDelivers(() =>
      own.spicedb.client.writeRelationships([{ operation: 'touch', relationship: grant('carol') }]),
    );
    expect((await through('carol')).status).toBe(200);
    await own.service.afterWatchDelivers(() =>
      own.spicedb.client.writeRelationships([{ operation: 'delete', relationship: grant('carol') }]),
    );
    expect(await through('carol')).toEqual({ status: 403, body: expect.not.stringContaining(UPSTREAM_BODY) });
  });

  it('denies everything, and proxies nothing, once the decision service is stopped', async () => {
    await own.service.stop();
    const answer = await through('alice');
    expect(answer.status).toBe(403);
    expect(answer.body).not.toContain(UPSTREAM_BODY);
  });

  it('runs the files docs/authzen-gateways.md shows, verbatim', async () => {
    const docs = await readFile(join(repoRoot(), 'docs/authzen-gateways.md'), 'utf8');
    for (const file of ['authzen.js', 'authzen.conf']) {
      expect(docs, file).toContain(await readFile(join(GATEWAY_CONFIG_DIR, file), 'utf8'));
    }
  });
});
