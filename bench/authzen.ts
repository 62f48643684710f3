// npm run bench:authzen [-- --rounds 15 --singles 200]
//
// The AuthZEN routes of the decision service against SpiceDB called directly, in one run against one SpiceDB of
// its own (memory datastore, loopback), the service in this process: a batch of 100 evaluations against one
// CheckBulkPermissions of the same pairs; search/resource for a subject with 1,000 usable items among 10,000
// against LookupResources (every page of 1,000); search/subject for an item 1,000 users may use against
// LookupSubjects; a single evaluation against POST /v1/check. Modes alternate within each round, and every
// round asks pairs of its own (the decision cache must not answer a repeat). Bounded: rounds × a few calls.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { mintToken } from '../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../src/decision/check-callers.js';
import { startDecisionService } from '../src/decision/decision-service.js';
import { DEFAULT_REVISION_BARRIER } from '../src/decision/revision-barrier.js';
import type { BulkCheckItem, RelationshipUpdate, SpiceDBClient } from '../src/spicedb/client.js';
import { encodeObjectId } from '../src/spicedb/object-id.js';
import { startBenchSpiceDB } from './support/bench-spicedb.js';
import { devBearer } from './support/dev-bearer.js';
import { printTable } from './support/markdown-table.js';
import { median } from './support/statistics.js';
import { until } from '../test/support/until.js';

const ITEMS = 10_000;
const USABLE = 1_000;
const BATCH = 100;
const PAGE = 1_000;
const SETTLE_MS = DEFAULT_REVISION_BARRIER.quantizationMs + DEFAULT_REVISION_BARRIER.marginMs;
const IN_A_DAY = new Date(Date.now() + 86_400_000);
const MINIMIZE_LATENCY = { minimizeLatency: true as const };

const { values: options } = parseArgs({
  options: { rounds: { type: 'string', default: '15' }, singles: { type: 'string', default: '200' } },
});
const rounds = Number(options.rounds);
const singles = Number(options.singles);

const item = (index: number) => `urn:dx:item:bench-${index}`;
const consumer = 'bench-consumer';
const popularItem = item(0);
const grant = (itemId: string, userId: string): RelationshipUpdate => ({
  operation: 'touch',
  relationship: {
    resource: { type: 'resource', id: encodeObjectId(itemId) },
    relation: 'api_consumer',
    subject: { type: 'user', id: encodeObjectId(userId) },
    expiresAt: IN_A_DAY,
  },
});

/** 10,000 items, 1,000 of them usable by the consumer, the others by one user each; 1,000 users of item 0. */
function world(): RelationshipUpdate[] {
  const items = Array.from({ length: ITEMS }, (_, index) =>
    grant(item(index), index % (ITEMS / USABLE) === 0 ? consumer : `owner-${index}`),
  );
  const users = Array.from({ length: USABLE - 1 }, (_, index) => grant(popularItem, `user-${index}`));
  return [...items, ...users];
}

async function timed(call: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await call();
  return performance.now() - started;
}

async function allResources(spicedb: SpiceDBClient): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  for (;;) {
    const page = await spicedb.lookupResources({
      resourceType: 'resource',
      permission: 'api_consumer',
      subject: { type: 'user', id: consumer },
      consistency: MINIMIZE_LATENCY,
      limit: PAGE,
      ...(cursor === undefined ? {} : { cursor }),
    });
    count += page.resourceIds.length;
    if (page.resultCount < PAGE || page.cursor === undefined) return count;
    cursor = page.cursor;
  }
}

async function main(): Promise<void> {
  const stateDir = await mkdtemp(join(tmpdir(), 'bench-authzen-'));
  const { server, client } = await startBenchSpiceDB(stateDir);
  const { key, bearer } = await devBearer(stateDir);
  const service = await startDecisionService({
    port: 0,
    host: '127.0.0.1',
    spicedb: { endpoint: server.endpoint, token: server.token, transport: 'plaintext' },
    authenticators: { bearer },
    logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
  });
  try {
    await client.writeRelationshipsInBatches(world());
    const authorization = `Bearer ${await mintToken(key, { sub: randomUUID(), roles: [DECISION_CLIENT_ROLE] })}`;
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${service.url}${path}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const searchResources = async () => {
      let count = 0;
      let token = '';
      do {
        const answer = (await post('/access/v1/search/resource', {
          subject: { type: 'user', id: consumer },
          resource: { type: 'resource' },
          action: { name: 'api' },
          page: { limit: PAGE, ...(token ? { token } : {}) },
        })) as { results: unknown[]; page: { next_token: string } };
        count += answer.results.length;
        token = answer.page.next_token;
      } while (token);
      return count;
    };
    // Ready, and the snapshot SpiceDB serves at minimize_latency holds the world.
    await until(
      async () => (await searchResources().catch(() => 0)) === USABLE,
      'the world to be visible',
      60_000,
      100,
    );
    // Past the barrier's window (quantization and margin): the steady state, where a search is read at
    // minimize_latency as the direct calls are, not the window right after the world was written.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));

    const pairs = (round: number) => Array.from({ length: BATCH }, (_, index) => item(round * BATCH + index));
    const bulkItems = (items: string[]): BulkCheckItem[] =>
      items.map((itemId) => ({
        resource: { type: 'resource', id: encodeObjectId(itemId) },
        permission: 'api_consumer',
        subject: { type: 'user', id: consumer },
      }));
    const evaluations = (items: string[]) => ({
      subject: { type: 'user', id: consumer },
      action: { name: 'api' },
      evaluations: items.map((id) => ({ resource: { type: 'resource', id } })),
    });
    const samples: Record<string, [number[], number[]]> = {
      'batch of 100 evaluations vs CheckBulkPermissions': [[], []],
      'search/resource (1,000 of 10,000) vs LookupResources': [[], []],
      'search/subject (1,000 users) vs LookupSubjects': [[], []],
      'single evaluation vs POST /v1/check': [[], []],
    };
    const [batch, resources, subjects, single] = Object.values(samples) as [number[], number[]][];
    for (let round = 0; round < rounds; round++) {
      // Distinct pairs for the two modes: neither answers from the other's decision cache or SpiceDB's cache.
      const [first, second] = [pairs(2 * round), pairs(2 * round + 1)];
      batch?.[0].push(await timed(() => post('/access/v1/evaluations', evaluations(first))));
      batch?.[1].push(await timed(() => client.checkBulkPermissions(bulkItems(second), MINIMIZE_LATENCY)));
      resources?.[0].push(await timed(searchResources));
      resources?.[1].push(await timed(() => allResources(client)));
      subjects?.[0].push(
        await timed(() =>
          post('/access/v1/search/subject', {
            subject: { type: 'user' },
            resource: { type: 'resource', id: popularItem },
            action: { name: 'api' },
          }),
        ),
      );
      subjects?.[1].push(
        await timed(() =>
          client.lookupSubjects({
            resource: { type: 'resource', id: encodeObjectId(popularItem) },
            permission: 'api_consumer',
            subjectType: 'user',
            consistency: MINIMIZE_LATENCY,
          }),
        ),
      );
    }
    for (let index = 0; index < singles; index++) {
      const [authzenUser, checkUser] = [`single-a-${index}`, `single-c-${index}`];
      single?.[0].push(
        await timed(() =>
          post('/access/v1/evaluation', {
            subject: { type: 'user', id: authzenUser },
            resource: { type: 'resource', id: item(index) },
            action: { name: 'api' },
          }),
        ),
      );
      single?.[1].push(
        await timed(() =>
          post('/v1/check', {
            subject_type: 'user',
            subject_id: checkUser,
            resource_type: 'resource',
            resource_id: item(index),
            relation: 'api',
          }),
        ),
      );
    }
    console.log(`bench:authzen: ${rounds} rounds, ${singles} single evaluations; medians in ms`);
    printTable(
      ['comparison', 'AuthZEN route', 'direct / check', 'ratio'],
      Object.entries(samples).map(([name, [route, direct]]) => [
        name,
        median(route).toFixed(2),
        median(direct).toFixed(2),
        (median(route) / median(direct)).toFixed(2),
      ]),
    );
  } finally {
    await service.stop();
    client.close();
    await server.process.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
