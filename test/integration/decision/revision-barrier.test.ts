import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relationship, RelationshipUpdate } from '../../../src/spicedb/client.js';
import { encodeObjectId, groupObjectId } from '../../../src/spicedb/object-id.js';
import { consistencyCount as countOf, type ConsistencySource } from '../../support/barrier-agreement.js';
import { until } from '../../../dev/wait/until.js';
import type { OwnSpiceDB } from '../controller/support/harness.js';
import { uniqueId } from '../support/cluster.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';
import { apiCheck, startServiceOnOwnSpiceDB } from './support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from './support/service-on-own-spicedb.js';
import { sleep } from '../../../dev/wait/sleep.js';

// SpiceDB quantizes minimize_latency reads to 5 s (its default): without the barrier, a check right after a
// change answers from before it for up to that long. No check here carries a token. A SpiceDB of this file's
// own, so that every message of the service's Watch is one of this file's changes: a check follows the Watch's
// delivery of the change (afterWatchDelivers), which is what the barrier promises.
let own: ServiceOnOwnSpiceDB;
let spicedb: OwnSpiceDB;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('revision-barrier');
  ({ spicedb, service } = own);
});

afterAll(() => own?.stop());

const inAnHour = () => new Date(Date.now() + 3_600_000);
/** The barrier forgets a change after SpiceDB's window (5 s) plus its margin (2 s). */
const RETENTION_MS = 7_000;

async function allowed(body: Record<string, unknown>): Promise<boolean> {
  const answer = await service.check(body);
  expect(answer.status).toBe(200);
  return answer.body.result.allowed;
}

const write = (operation: RelationshipUpdate['operation'], relationship: Relationship) =>
  service.afterWatchDelivers(() => spicedb.client.writeRelationships([{ operation, relationship }]));

const consistencyCount = async (source: ConsistencySource) =>
  countOf(await service.metrics.metrics(), source);

describe('the revision barrier, without any token', () => {
  it('allows right after a grant is written and denies right after it is deleted, every time', async () => {
    const touchedBefore = await consistencyCount('touched');
    for (let iteration = 0; iteration < 20; iteration++) {
      const itemId = `urn:dx:item:${uniqueId('barrier')}`;
      const consumer = uniqueId('user');
      const grant: Relationship = {
        resource: { type: 'resource', id: encodeObjectId(itemId) },
        relation: 'api_consumer',
        subject: { type: 'user', id: consumer },
        expiresAt: inAnHour(),
      };
      expect(await allowed(apiCheck(consumer, itemId)), `iteration ${iteration}, before`).toBe(false);
      await write('touch', grant);
      expect(await allowed(apiCheck(consumer, itemId)), `iteration ${iteration}, after the write`).toBe(true);
      await write('delete', grant);
      expect(await allowed(apiCheck(consumer, itemId)), `iteration ${iteration}, after the delete`).toBe(
        false,
      );
    }
    expect((await consistencyCount('touched')) - touchedBefore).toBeGreaterThanOrEqual(40);
  });

  it('stays at minimize_latency for checks whose resource and subject did not change recently', async () => {
    // For one window after the Watch (re)starts, everything counts as touched; after that, quiet checks are cheap.
    await until(async () => {
      const before = await consistencyCount('minimize_latency');
      expect(await allowed(apiCheck(uniqueId('user'), `urn:dx:item:${uniqueId('quiet')}`))).toBe(false);
      return (await consistencyCount('minimize_latency')) === before + 1;
    }, 'a quiet check at minimize_latency');
  });

  it('sees membership changes at once: organisation and group members', async () => {
    const itemId = `urn:dx:item:${uniqueId('members')}`;
    const resource = { type: 'resource', id: encodeObjectId(itemId) };
    const [org, groupId, member] = [uniqueId('org'), uniqueId('group'), uniqueId('user')];
    const orgObject = { type: 'organization', id: encodeObjectId(org) };
    const groupObject = { type: 'group', id: groupObjectId(org, groupId) };
    await write('touch', {
      resource,
      relation: 'api_consumer',
      subject: { ...orgObject, relation: 'member' },
      expiresAt: inAnHour(),
    });
    await write('touch', { resource, relation: 'editor', subject: { ...groupObject, relation: 'member' } });
    // Let the barrier forget the grants: from here on only the memberships are recent.
    await sleep(RETENTION_MS + 500);
    const viewerCheck = { ...apiCheck(member, itemId), relation: 'viewer' };

    const orgMembership: Relationship = {
      resource: orgObject,
      relation: 'member',
      subject: { type: 'user', id: member },
    };
    const groupMembership: Relationship = { ...orgMembership, resource: groupObject };
    expect(await allowed(apiCheck(member, itemId))).toBe(false);
    await write('touch', orgMembership);
    expect(await allowed(apiCheck(member, itemId)), 'organisation member').toBe(true);
    await write('delete', orgMembership);
    expect(await allowed(apiCheck(member, itemId)), 'no longer an organisation member').toBe(false);

    await write('touch', groupMembership);
    expect(await allowed(viewerCheck), 'group member').toBe(true);
    await write('delete', groupMembership);
    expect(await allowed(viewerCheck), 'no longer a group member').toBe(false);
  });

  it('sees an agent owner’s membership change at once, though it touches neither the item nor the agent', async () => {
    const itemId = `urn:dx:item:${uniqueId('agent-members')}`;
    const resource = { type: 'resource', id: encodeObjectId(itemId) };
    const [org, owner] = [uniqueId('org'), uniqueId('owner')];
    const agent = { type: 'agent', id: uniqueId('agent') };
    const orgObject = { type: 'organization', id: encodeObjectId(org) };
    for (const relationship of [
      {
        resource,
        relation: 'api_consumer',
        subject: { ...orgObject, relation: 'member' },
        expiresAt: inAnHour(),
      },
      { resource, relation: 'querier_delegate', subject: agent, expiresAt: inAnHour() },
      { resource: { type: 'user', id: owner }, relation: 'agent', subject: agent },
    ]) {
      await write('touch', relationship);
    }
    await sleep(RETENTION_MS + 500);
    const agentCheck = {
      ...apiCheck(agent.id, itemId),
      subject_type: 'agent',
      relation: 'delegated_querier',
    };
    const ownersMembership: Relationship = {
      resource: orgObject,
      relation: 'member',
      subject: { type: 'user', id: owner },
    };

    expect(await allowed(agentCheck)).toBe(false);
    await write('touch', ownersMembership);
    expect(await allowed(agentCheck), 'owner joined the organisation').toBe(true);
    await write('delete', ownersMembership);
    expect(await allowed(agentCheck), 'owner left the organisation').toBe(false);
  });

  it('reports a current Watch in readiness and metrics', async () => {
    const ready = await fetch(`${service.url}/healthz/ready`);
    expect(ready.status).toBe(200);
    const text = await service.metrics.metrics();
    expect(text).toMatch(/^policygrant_decision_revision_watch_up 1$/m);
    expect(text).toMatch(/^policygrant_decision_revision_watch_last_message_age_seconds \d/m);
    expect(text).toMatch(/^policygrant_decision_revision_tracked_entries \d+$/m);
  });
});

// The decision cache under load: checks hammer a few grants (so that their allows are remembered and served
// from memory) while the grants are revoked one by one. What test/support/barrier-agreement.ts holds the
// service to must hold with the cache too: once the Watch has delivered a revocation, no check sent afterwards
// allows; once a check denied, no later one allows again.
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
    const hitsBefore = await metricValue('policygrant_decision_cache_lookups_total', 'outcome="hit"');
    const changedBefore = await metricValue('policygrant_decision_cache_evictions_total', 'reason="changed"');
    const stop = new AbortController();
    const load = hammer(accesses, stop.signal);
    const revokedAt: number[] = [];
    try {
      await until(
        async () =>
          (await metricValue('policygrant_decision_cache_lookups_total', 'outcome="hit"')) > hitsBefore + 50,
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
    expect(await metricValue('policygrant_decision_cache_lookups_total', 'outcome="hit"')).toBeGreaterThan(
      hitsBefore + 50,
    );
    expect(
      await metricValue('policygrant_decision_cache_evictions_total', 'reason="changed"'),
    ).toBeGreaterThan(changedBefore);
  });
});
