import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB } from '../../../dev/localplane/spicedb-server.js';
import type { SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { controlPlane } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { CheckResponse, DecisionServiceUnderTest } from './support/decision-service.js';

// Outages need a SpiceDB of this file's own: the shared one is never stopped.
let stateDir: string;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'decision-fail-closed-'));
});

afterAll(async () => {
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const ITEM = 'urn:dx:item:outage';
const grantCheck = {
  subject_type: 'user',
  subject_id: 'consumer',
  resource_type: 'resource',
  resource_id: ITEM,
  relation: 'api',
};

function expectDeniedBecauseOfSpiceDB({ status, body }: CheckResponse): void {
  expect(status).toBe(503);
  expect(body.type).toBe('urn:dx:authz:DependencyUnavailable');
  expect(body.detail).toContain('spicedb');
  expect(body.result).toEqual({ allowed: false });
}

async function readiness(service: DecisionServiceUnderTest): Promise<{ status: number; detail?: string }> {
  const response = await fetch(`${service.url}/healthz/ready`);
  return { status: response.status, detail: ((await response.json()) as { detail?: string }).detail };
}

async function startOwnSpiceDB(options: { port?: number; token?: string } = {}): Promise<SpiceDBServer> {
  const binary = controlPlane().tools.spicedb ?? (await resolveToolPaths()).spicedb;
  return startSpiceDB({ binary, stateDir, name: 'spicedb-decision-outage', ...options });
}

/** The project schema and one grant: `consumer` may use `ITEM` by api. */
async function seed(spicedb: SpiceDBServer): Promise<string> {
  const client = new SpiceDBClient({
    endpoint: spicedb.endpoint,
    token: spicedb.token,
    transport: 'plaintext',
  });
  try {
    await client.ensureSchema(readSchemaText());
    return await client.writeRelationships([
      {
        operation: 'touch',
        relationship: {
          resource: { type: 'resource', id: encodeObjectId(ITEM) },
          relation: 'api_consumer',
          subject: { type: 'user', id: 'consumer' },
          expiresAt: new Date(Date.now() + 3_600_000),
        },
      },
    ]);
  } finally {
    client.close();
  }
}

describe('the decision service fails closed', () => {
  it('denies with 503 while its SpiceDB is down, and serves again once it is back', async () => {
    let spicedb = await startOwnSpiceDB();
    const service = await startServiceUnderTest({ spicedb, checkTimeoutMs: 1_000 });
    try {
      const zedToken = await seed(spicedb);
      const allowed = await service.check({ ...grantCheck, consistency_token: zedToken });
      expect(allowed.body.result.allowed).toBe(true);

      await spicedb.process.stop();
      for (const body of [grantCheck, { ...grantCheck, consistency_token: zedToken }]) {
        expectDeniedBecauseOfSpiceDB(await service.check(body));
      }
      expect(await readiness(service)).toEqual({ status: 503, detail: expect.stringContaining('spicedb') });
      const metrics = await service.metrics.metrics();
      expect(metrics).toContain('policygrant_decisions_total{result="error"} 2');
      expect(metrics).toMatch(
        /policygrant_decision_spicedb_errors_total\{grpc_code="(UNAVAILABLE|NO_STATUS)"\} 2/,
      );

      // Same address and key, empty memory datastore: no schema, so not ready, and still no allow.
      spicedb = await startOwnSpiceDB({ port: Number(spicedb.endpoint.split(':')[1]), token: spicedb.token });
      await expect.poll(() => readiness(service)).toMatchObject({ status: 503 });
      expectDeniedBecauseOfSpiceDB(await service.check(grantCheck));
      const reseeded = await seed(spicedb);
      await untilReady(service);
      expect((await service.check({ ...grantCheck, consistency_token: reseeded })).body.result.allowed).toBe(
        true,
      );
    } finally {
      await service.stop();
      await spicedb.process.stop();
    }
  });

  it('denies with 503 within the deadline when SpiceDB accepts connections but never answers', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const endpoint = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    const service = await startServiceUnderTest({ spicedb: { endpoint, token: 'key' }, checkTimeoutMs: 500 });
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const started = Date.now();
        const answer = await service.check(grantCheck);
        const elapsed = Date.now() - started;
        expectDeniedBecauseOfSpiceDB(answer);
        expect(elapsed).toBeGreaterThanOrEqual(450);
        // Answered at all: a check without a deadline would wait on the silent server for ever.
        expect(elapsed).toBeLessThan(POLL_TIMEOUT_MS);
      }
      expect(await service.metrics.metrics()).toContain(
        'policygrant_decision_spicedb_errors_total{grpc_code="DEADLINE_EXCEEDED"} 3',
      );
      expect((await readiness(service)).status).toBe(503);
    } finally {
      await service.stop();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
