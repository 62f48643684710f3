import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB } from '../../../src/localplane/spicedb-server.js';
import type { SpiceDBServer } from '../../../src/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../../src/localplane/tool-paths.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import type { Relationship } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { until } from '../../support/until.js';
import { controlPlane, uniqueId } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { CheckResponse, DecisionServiceUnderTest } from './support/decision-service.js';
import { startTcpProxy } from './support/tcp-proxy.js';
import type { TcpProxy } from './support/tcp-proxy.js';

// Outages of the revision barrier's Watch, for real: a SpiceDB of this file's own, reached through a TCP proxy
// that the tests cut, and killed and started again (its memory datastore then comes back empty). No check
// carries a token: freshness is the barrier's alone.
let stateDir: string;
let spicedb: SpiceDBServer;
let proxy: TcpProxy;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'decision-watch-outage-'));
  spicedb = await startOwnSpiceDB();
  await writeSchema();
  proxy = await startTcpProxy(spicedb.endpoint);
  service = await startServiceUnderTest({
    spicedb: { endpoint: proxy.endpoint, token: spicedb.token },
    checkTimeoutMs: 1_000,
  });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
  await proxy?.close();
  await spicedb?.process.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function startOwnSpiceDB(reuse?: SpiceDBServer): Promise<SpiceDBServer> {
  const binary = controlPlane().tools.spicedb ?? (await resolveToolPaths()).spicedb;
  return startSpiceDB({
    binary,
    stateDir,
    name: 'spicedb-watch-outage',
    ...(reuse ? { port: Number(reuse.endpoint.split(':')[1]), token: reuse.token } : {}),
  });
}

/** Writes to SpiceDB directly, never through the proxy. */
async function direct<T>(use: (client: SpiceDBClient) => Promise<T>): Promise<T> {
  const client = new SpiceDBClient({
    endpoint: spicedb.endpoint,
    token: spicedb.token,
    transport: 'plaintext',
  });
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

const writeSchema = () => direct((client) => client.ensureSchema(readSchemaText()));

function newGrant(): { grant: Relationship; check: Record<string, string> } {
  const itemId = `urn:dx:item:${uniqueId('outage')}`;
  const consumer = uniqueId('user');
  return {
    grant: {
      resource: { type: 'resource', id: encodeObjectId(itemId) },
      relation: 'api_consumer',
      subject: { type: 'user', id: consumer },
      expiresAt: new Date(Date.now() + 3_600_000),
    },
    check: {
      subject_type: 'user',
      subject_id: consumer,
      resource_type: 'resource',
      resource_id: itemId,
      relation: 'api',
    },
  };
}

const write = (operation: 'touch' | 'delete', relationship: Relationship) =>
  direct((client) => client.writeRelationships([{ operation, relationship }]));
const writeSeen = (operation: 'touch' | 'delete', relationship: Relationship) =>
  service.afterWatchDelivers(() => write(operation, relationship));

async function readiness(): Promise<{ status: number; detail?: string }> {
  const response = await fetch(`${service.url}/healthz/ready`);
  return { status: response.status, detail: ((await response.json()) as { detail?: string }).detail };
}

async function metric(line: RegExp): Promise<number> {
  const match = (await service.metrics.metrics()).match(line);
  return Number(match?.[1] ?? Number.NaN);
}

/** Checks until one is evaluated (200); every answer on the way must be a deny. */
async function firstEvaluated(check: Record<string, string>): Promise<CheckResponse> {
  let answer: CheckResponse | undefined;
  await until(async () => {
    answer = await service.check(check);
    expect(answer.body.result.allowed, JSON.stringify(answer.body)).toBe(false);
    return answer.status === 200;
  }, 'a check to be evaluated again');
  return answer as CheckResponse;
}

const notReadyForWatch = async () => {
  const { status, detail } = await readiness();
  return status === 503 && (detail ?? '').includes('spicedb-watch');
};

describe('the revision barrier when its Watch goes down', () => {
  it('never allows a grant revoked during a partition, and resumes the Watch from its last revision', async () => {
    const { grant, check } = newGrant();
    await write('touch', grant);
    await until(async () => (await service.check(check)).body.result.allowed, 'the grant to be allowed');
    const errorsBefore = await metric(/^decision_revision_watch_restarts_total\{reason="error"\} (\d+)/m);

    proxy.cut();
    await until(notReadyForWatch, 'readiness to name spicedb-watch');
    expect(await metric(/^decision_revision_watch_up (\d+)/m)).toBe(0);
    const during = await service.check(check);
    expect(during.status).toBe(503);
    expect(during.body.result).toEqual({ allowed: false });
    await write('delete', grant); // SpiceDB changes while the service cannot see it
    proxy.restore();

    const after = await firstEvaluated(check);
    expect(after.body.result.allowed).toBe(false);
    await untilReady(service);
    expect(await metric(/^decision_revision_watch_up (\d+)/m)).toBe(1);
    expect(await metric(/^decision_revision_watch_restarts_total\{reason="error"\} (\d+)/m)).toBeGreaterThan(
      errorsBefore,
    );
    expect(await metric(/^decision_revision_watch_restarts_total\{reason="unknown_revision"\} (\d+)/m)).toBe(
      0,
    );
  });

  it('survives a SpiceDB restart: starts again from the head of the new datastore, fresh at once', async () => {
    await spicedb.process.kill();
    await until(notReadyForWatch, 'readiness to name spicedb-watch');
    const { grant, check } = newGrant();
    expect((await service.check(check)).status).toBe(503);

    spicedb = await startOwnSpiceDB(spicedb);
    await writeSchema();
    await untilReady(service);
    expect(
      await metric(/^decision_revision_watch_restarts_total\{reason="unknown_revision"\} (\d+)/m),
    ).toBeGreaterThanOrEqual(1);

    for (let iteration = 0; iteration < 5; iteration++) {
      const { grant: next, check: nextCheck } = iteration === 0 ? { grant, check } : newGrant();
      await writeSeen('touch', next);
      expect((await service.check(nextCheck)).body.result.allowed, `iteration ${iteration}, granted`).toBe(
        true,
      );
      await writeSeen('delete', next);
      expect((await service.check(nextCheck)).body.result.allowed, `iteration ${iteration}, revoked`).toBe(
        false,
      );
    }
  });
});
