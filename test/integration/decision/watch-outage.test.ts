import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB } from '../../../dev/localplane/spicedb-server.js';
import type { SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import type { Relationship } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import { DEFAULT_REVISION_BARRIER } from '../../../src/decision/revision-barrier.js';
import { until } from '../../../dev/wait/until.js';
import { controlPlane, uniqueId } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { CheckResponse, DecisionServiceUnderTest } from './support/decision-service.js';
import { TcpProxy } from '../../support/tcp-proxy.js';
import { sleep } from '../../../dev/wait/sleep.js';

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
  proxy = await TcpProxy.start({ target: spicedb.endpoint });
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
async function direct<T>(use: (client: SpiceDBClient) => Promise<T>, server = spicedb): Promise<T> {
  const client = new SpiceDBClient({
    endpoint: server.endpoint,
    token: server.token,
    transport: 'plaintext',
  });
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

const writeSchema = (server = spicedb) => direct((client) => client.ensureSchema(readSchemaText()), server);

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

const EXPIRIES_KNOWN = /^policygrant_decision_cache_expiries_known (\d+)/m;
const EXPIRING = /^policygrant_decision_cache_expiring_relationships (\d+)/m;

/** The expiring relationships SpiceDB holds on items. */
const expiringHeldBySpiceDB = () =>
  direct(async (client) => {
    let count = 0;
    for await (const page of client.readRelationships({ resourceType: 'resource' })) {
      count += page.relationships.filter(({ expiresAt }) => expiresAt).length;
    }
    return count;
  });

const notReadyForWatch = async () => {
  const { status, detail } = await readiness();
  return status === 503 && (detail ?? '').includes('spicedb-watch');
};

const lookups = (outcome: 'hit' | 'miss') =>
  metric(new RegExp(`^policygrant_decision_cache_lookups_total\\{outcome="${outcome}"\\} (\\d+)`, 'm'));

/** Checks until an allow of `check` is answered from memory. */
async function untilServedFromMemory(check: Record<string, string>): Promise<void> {
  await until(async () => {
    const hits = await lookups('hit');
    const answer = await service.check(check);
    return answer.body.result.allowed && (await lookups('hit')) > hits;
  }, 'an allow answered from memory');
}

describe('the decision cache’s lifetimes', () => {
  it('remembers an allow past SpiceDB’s window while nothing touches it and its grant is far from expiring', async () => {
    const { grant, check } = newGrant(); // expires in an hour
    await writeSeen('touch', grant);
    await untilServedFromMemory(check);
    const [hitsBefore, missesBefore] = [await lookups('hit'), await lookups('miss')];
    const expiredBefore = await metric(
      /^policygrant_decision_cache_evictions_total\{reason="expired"\} (\d+)/m,
    );
    const endAt = performance.now() + DEFAULT_REVISION_BARRIER.quantizationMs + 1_000;
    let checks = 0;
    while (performance.now() < endAt) {
      expect((await service.check(check)).body.result.allowed).toBe(true);
      checks += 1;
      await sleep(100);
    }
    // Never forgotten for its age (with the window's lifetime it would have been, once); answered from memory
    // throughout, but for a check that found SpiceDB quiet for a second on a loaded machine and asked it.
    expect(await metric(/^policygrant_decision_cache_evictions_total\{reason="expired"\} (\d+)/m)).toBe(
      expiredBefore,
    );
    expect(await lookups('miss')).toBe(missesBefore);
    expect(await lookups('hit')).toBeGreaterThan(hitsBefore + checks / 2);
  });

  it('follows the expiries of grants: read from SpiceDB at start-up, then from the Watch', async () => {
    await until(async () => (await metric(EXPIRIES_KNOWN)) === 1, 'the read');
    const expiring = await metric(EXPIRING);
    const { grant } = newGrant();
    await writeSeen('touch', grant);
    expect(await metric(EXPIRING)).toBe(expiring + 1);
    await writeSeen('delete', grant);
    expect(await metric(EXPIRING)).toBe(expiring + 1); // kept until it is past: on the safe side

    // A replica started now reads what SpiceDB holds: every test's grant is on an item of its own.
    await write('touch', newGrant().grant);
    const held = await expiringHeldBySpiceDB();
    const replica = await startServiceUnderTest({
      spicedb: { endpoint: spicedb.endpoint, token: spicedb.token },
    });
    try {
      const replicaMetric = async (line: RegExp) =>
        Number((await replica.metrics.metrics()).match(line)?.[1]);
      await until(async () => (await replicaMetric(EXPIRIES_KNOWN)) === 1, 'the read');
      expect(held).toBeGreaterThan(0);
      expect(await replicaMetric(EXPIRING)).toBe(held);
    } finally {
      await replica.stop();
    }
  });

  it('reads the expiries again once renewals made them twice what SpiceDB held, keeping the live ones', async () => {
    await until(async () => (await metric(EXPIRIES_KNOWN)) === 1, 'the read');
    const grants = Array.from({ length: 1_000 }, () => newGrant().grant);
    const renewals = 11; // each gives every grant an expiry more: 11,000, past the floor of 10,000
    for (let renewal = 0; renewal < renewals; renewal++) {
      const expiresAt = new Date(Date.now() + 3_600_000 + renewal * 60_000);
      const updates = grants.map((grant) => ({
        operation: 'touch' as const,
        relationship: { ...grant, expiresAt },
      }));
      await service.afterWatchDelivers(() => direct((client) => client.writeRelationships(updates)));
    }
    const held = await expiringHeldBySpiceDB();
    // Read again at the change that crossed the bound (the tenth or the eleventh renewal): SpiceDB's live
    // expiries, plus the eleventh renewal's when it came after the snapshot.
    await until(async () => {
      const expiring = await metric(EXPIRING);
      return (await metric(EXPIRIES_KNOWN)) === 1 && expiring >= held && expiring <= held + grants.length;
    }, 'the expiries to be read again');
  });
});

describe('the revision barrier when its Watch goes down', () => {
  it('never allows a grant revoked during a partition, and resumes the Watch from its last revision', async () => {
    const { grant, check } = newGrant();
    await write('touch', grant);
    await until(async () => (await service.check(check)).body.result.allowed, 'the grant to be allowed');
    const errorsBefore = await metric(
      /^policygrant_decision_revision_watch_restarts_total\{reason="error"\} (\d+)/m,
    );

    proxy.pause('refuse');
    await until(notReadyForWatch, 'readiness to name spicedb-watch');
    expect(await metric(/^policygrant_decision_revision_watch_up (\d+)/m)).toBe(0);
    const during = await service.check(check);
    expect(during.status).toBe(503);
    expect(during.body.result).toEqual({ allowed: false });
    await write('delete', grant); // SpiceDB changes while the service cannot see it
    proxy.resume();

    const after = await firstEvaluated(check);
    expect(after.body.result.allowed).toBe(false);
    await untilReady(service);
    expect(await metric(/^policygrant_decision_revision_watch_up (\d+)/m)).toBe(1);
    expect(
      await metric(/^policygrant_decision_revision_watch_restarts_total\{reason="error"\} (\d+)/m),
    ).toBeGreaterThan(errorsBefore);
    expect(
      await metric(/^policygrant_decision_revision_watch_restarts_total\{reason="unknown_revision"\} (\d+)/m),
    ).toBe(0);
  });

  it('stops answering from memory once SpiceDB goes quiet on a stalled connection, and never allows a grant revoked behind it', async () => {
    const { grant, check } = newGrant();
    await writeSeen('touch', grant);
    await untilServedFromMemory(check);

    proxy.pause('hold'); // the connection stays open: nothing fails, the Watch is still "current"
    const pausedAt = performance.now();
    await write('delete', grant); // SpiceDB changes behind the stall
    // Past the liveness window (1 s) no answer comes from memory: the check goes to SpiceDB and times out.
    await sleep(DEFAULT_REVISION_BARRIER.livenessMs + 300 - (performance.now() - pausedAt));
    const behindTheStall = await service.check(check);
    expect(behindTheStall.body.result.allowed, JSON.stringify(behindTheStall.body)).toBe(false);
    expect(behindTheStall.status).toBe(503);
    // Readiness fails as well, naming SpiceDB: its probe gets no answer through the stall.
    const { status, detail } = await readiness();
    expect(status).toBe(503);
    expect(detail).toMatch(/not ready: .*\bspicedb \((timed out|failed)\)/);
    proxy.resume();

    const after = await firstEvaluated(check);
    expect(after.body.result.allowed).toBe(false);
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
      await metric(/^policygrant_decision_revision_watch_restarts_total\{reason="unknown_revision"\} (\d+)/m),
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

describe('the revision barrier after a partition', () => {
  // A SpiceDB whose minimize_latency snapshots may be 30 s old, and a service that knows it: a check evaluated
  // at a quantized snapshot while the Watch has not delivered a revocation is a stale allow, not a lucky deny.
  const QUANTIZATION = { ...DEFAULT_REVISION_BARRIER, quantizationMs: 30_000 };
  let own: SpiceDBServer;
  let ownProxy: TcpProxy;
  let ownService: DecisionServiceUnderTest;

  beforeAll(async () => {
    // On PostgreSQL, as production: the memory datastore answers minimize_latency at its head, never older.
    own = await startSpiceDB({
      binary: controlPlane().tools.spicedb ?? (await resolveToolPaths()).spicedb,
      stateDir,
      name: 'spicedb-catch-up',
      datastore: { engine: 'postgres', url: (await testDatabase('spicedb_catch_up')).url },
      extraArgs: ['--datastore-revision-quantization-interval=30s'],
    });
    await writeSchema(own);
    ownProxy = await TcpProxy.start({ target: own.endpoint });
    ownService = await startServiceUnderTest({
      spicedb: { endpoint: ownProxy.endpoint, token: own.token },
      checkTimeoutMs: 1_000,
      revisionBarrier: QUANTIZATION,
    });
    await untilReady(ownService);
  });

  afterAll(async () => {
    await ownService?.stop();
    await ownProxy?.close();
    await own?.process.stop();
  });

  const writeOwn = (updates: { operation: 'touch' | 'delete'; relationship: Relationship }[]) =>
    direct((client) => client.writeRelationships(updates), own);

  it('never allows a grant revoked during a partition, while the Watch has not caught up with what it missed', async () => {
    const { grant, check } = newGrant();
    await writeOwn([{ operation: 'touch', relationship: grant }]);
    await until(async () => (await ownService.check(check)).body.result.allowed, 'the grant to be allowed');

    ownProxy.pause('refuse');
    await until(
      async () => (await fetch(`${ownService.url}/healthz/ready`)).status === 503,
      'the Watch to go',
    );
    // Much for the Watch to catch up on, then the revocation, then a grant that shows a check sees past it.
    for (let batch = 0; batch < 20; batch++) {
      const others = Array.from({ length: 500 }, () => ({
        operation: 'touch' as const,
        relationship: newGrant().grant,
      }));
      await writeOwn(others);
    }
    await writeOwn([{ operation: 'delete', relationship: grant }]);
    const { grant: marker, check: markerCheck } = newGrant();
    await writeOwn([{ operation: 'touch', relationship: marker }]);
    ownProxy.resume();

    await until(async () => {
      const revoked = await ownService.check(check);
      expect(revoked.body.result.allowed, JSON.stringify(revoked.body)).toBe(false);
      return (await ownService.check(markerCheck)).body.result.allowed;
    }, 'a check to see the grant written after the revocation');
  });
});
