import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rm } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Relationship } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { until } from '../../support/until.js';
import { makeStateDir, startOwnSpiceDB } from '../controller/support/harness.js';
import type { OwnSpiceDB } from '../controller/support/harness.js';
import { uniqueId } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// The decision cache under load: checks hammer a few grants (so their allows are remembered and served from
// memory) while the grants are revoked one by one. What test/support/barrier-agreement.ts holds the service to
// must hold with the cache too: once the Watch has delivered a revocation, no check sent afterwards allows;
// once a check denied, no later one allows again. A SpiceDB of this file's own, so that every Watch message is
// one of this file's changes.
let stateDir: string;
let spicedb: OwnSpiceDB;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  stateDir = await makeStateDir('decision-cache');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-decision-cache');
  service = await startServiceUnderTest({ spicedb: spicedb.server });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
  await spicedb?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

const inAnHour = () => new Date(Date.now() + 3_600_000);
const CHECKS_IN_FLIGHT = 8;

interface Access {
  userId: string;
  itemId: string;
  /** What gives the access; deleting it revokes it. */
  revocable: Relationship;
  granted: Relationship[];
}

/** A user's own grant, or a grant to an organisation the user is a member of (revoked by the membership). */
function access(viaOrganisation: boolean): Access {
  const [userId, itemId] = [uniqueId('user'), `urn:dx:item:${uniqueId('cached')}`];
  const resource = { type: 'resource', id: encodeObjectId(itemId) };
  const user = { type: 'user', id: userId };
  if (!viaOrganisation) {
    const grant = { resource, relation: 'api_consumer', subject: user, expiresAt: inAnHour() };
    return { userId, itemId, revocable: grant, granted: [grant] };
  }
  const organisation = { type: 'organization', id: encodeObjectId(uniqueId('org')) };
  const membership = { resource: organisation, relation: 'member', subject: user };
  const grant = {
    resource,
    relation: 'api_consumer',
    subject: { ...organisation, relation: 'member' },
    expiresAt: inAnHour(),
  };
  return { userId, itemId, revocable: membership, granted: [grant, membership] };
}

interface Answer {
  access: number;
  sentAt: number;
  answeredAt: number;
  allowed: boolean;
}

/** Checks of every access, round robin, CHECKS_IN_FLIGHT at a time, until `stop` aborts. */
async function hammer(accesses: Access[], stop: AbortSignal): Promise<Answer[]> {
  const answers: Answer[] = [];
  let next = 0;
  const loop = async () => {
    while (!stop.aborted) {
      const index = next++ % accesses.length;
      const { userId, itemId } = accesses[index] as Access;
      const sentAt = performance.now();
      const answer = await service.check({
        subject_type: 'user',
        subject_id: userId,
        resource_type: 'resource',
        resource_id: itemId,
        relation: 'api',
      });
      expect(answer.status).toBe(200);
      answers.push({
        access: index,
        sentAt,
        answeredAt: performance.now(),
        allowed: answer.body.result.allowed,
      });
    }
  };
  await Promise.all(Array.from({ length: CHECKS_IN_FLIGHT }, loop));
  return answers;
}

async function metricValue(name: string, labels: string): Promise<number> {
  const line = (await service.metrics.metrics())
    .split('\n')
    .find((text) => text.startsWith(`${name}{${labels}}`));
  return Number(line?.split(' ')[1] ?? 0);
}

describe('the decision cache under load', () => {
  it('never allows after a revocation the Watch delivered, nor after a deny, while serving allows from memory', async () => {
    const accesses = Array.from({ length: 8 }, (_, index) => access(index % 2 === 1));
    await service.afterWatchDelivers(() =>
      spicedb.client.writeRelationships(
        accesses.flatMap(({ granted }) =>
          granted.map((relationship) => ({ operation: 'touch' as const, relationship })),
        ),
      ),
    );
    const hitsBefore = await metricValue('decision_cache_lookups_total', 'outcome="hit"');
    const changedBefore = await metricValue('decision_cache_evictions_total', 'reason="changed"');
    const stop = new AbortController();
    const load = hammer(accesses, stop.signal);
    const revokedAt: number[] = [];
    try {
      await until(
        async () => (await metricValue('decision_cache_lookups_total', 'outcome="hit"')) > hitsBefore + 50,
        'allows served from memory',
      );
      for (const [index, { revocable }] of accesses.entries()) {
        await service.afterWatchDelivers(() =>
          spicedb.client.writeRelationships([{ operation: 'delete', relationship: revocable }]),
        );
        revokedAt[index] = performance.now();
        await sleep(200); // the others keep being served from memory meanwhile
      }
      await sleep(1_000);
    } finally {
      stop.abort();
    }
    const answers = await load;

    const allowedAfterRevocation = answers.filter(
      (answer) => answer.allowed && answer.sentAt > (revokedAt[answer.access] ?? Infinity),
    );
    const firstDenyAt = accesses.map((_, index) =>
      Math.min(...answers.filter((a) => a.access === index && !a.allowed).map((a) => a.answeredAt)),
    );
    const allowedAfterDeny = answers.filter(
      (answer) => answer.allowed && answer.sentAt > (firstDenyAt[answer.access] ?? Infinity),
    );
    expect(allowedAfterRevocation).toEqual([]);
    expect(allowedAfterDeny).toEqual([]);
    // Every access was allowed before its revocation and denied after it: the load covered both sides.
    for (const [index] of accesses.entries()) {
      expect(answers.some((a) => a.access === index && a.allowed)).toBe(true);
      expect(answers.some((a) => a.access === index && a.sentAt > (revokedAt[index] ?? 0))).toBe(true);
      expect(firstDenyAt[index]).toBeLessThan(Infinity);
    }
    // Allows were served from memory, and the revocations made the cache forget them.
    expect(await metricValue('decision_cache_lookups_total', 'outcome="hit"')).toBeGreaterThan(
      hitsBefore + 50,
    );
    expect(await metricValue('decision_cache_evictions_total', 'reason="changed"')).toBeGreaterThan(
      changedBefore,
    );
  });
});
