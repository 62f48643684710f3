import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MembershipKey } from '../../../src/api/v1alpha1/index.js';
import { startAclApi, type RunningAclApi } from '../../../src/acl/acl-server.js';
import {
  EVENT_BATCH,
  memberEvent,
  STRUCTURED_EVENT,
  TEST_EVENT_SOURCE,
} from '../../support/member-events.js';
import { TcpProxy } from '../../support/tcp-proxy.js';
import {
  AclHarness,
  BASIC_SECRET,
  PRODUCER_CLIENT_ID,
  PRODUCER_ORGANISATIONS,
  until,
  type Caller,
} from './support/acl-harness.js';
import { AuditDatabase } from './support/audit-records.js';

// Membership events (POST /events), snapshots (PUT .../members) and member listings (GET .../members)
// against the real kube-apiserver: outcomes, the Membership objects they leave, ordering, all-or-nothing
// validation, roles and the organisations a producer is bound to, media types, and a Kubernetes outage.

const harness = new AclHarness();
/** A platform producer: it speaks for every organisation, so the tests below may use any. */
let producer: Caller;
let cosAdmin: Caller;

beforeAll(async () => {
  await harness.start('acl-memberships');
  producer = await harness.user({ roles: ['platform_event_producer'] });
  cosAdmin = await harness.user({ roles: ['cos_admin'] });
});

afterAll(() => harness.stop());

interface EventResults {
  results: { id: string; outcome: string }[];
  detail: string;
}

function at(minutesAgo: number): string {
  return new Date(Date.now() - minutesAgo * 60_000).toISOString();
}

function send(events: unknown, caller = producer, contentType = EVENT_BATCH) {
  return harness.request<EventResults>('POST', '/events', {
    caller,
    body: events,
    headers: { 'content-type': contentType },
  });
}

function orgKey(organisationId: string = randomUUID()): MembershipKey {
  return { organisationId, userId: randomUUID() };
}

describe('POST /events', () => {
  it('applies an event, answers a redelivery as duplicate and an older event as stale, changing nothing', async () => {
    const key = orgKey();
    const added = memberEvent('added', key, at(10));
    const first = await send(added, producer, STRUCTURED_EVENT);
    expect(first.status).toBe(200);
    expect(first.body.results).toEqual([{ id: added.id, outcome: 'applied' }]);
    expect(first.body.detail).toBe('1 applied, 0 duplicate, 0 stale');
    const created = await harness.getMembership(key);
    expect(created?.spec).toEqual({
      ...key,
      changedAt: added.time,
      appliedEvents: [{ source: TEST_EVENT_SOURCE, id: added.id }],
    });

    const again = await send([added]);
    expect(again.body.results).toEqual([{ id: added.id, outcome: 'duplicate' }]);
    const older = memberEvent('removed', key, at(20));
    const stale = await send([older]);
    expect(stale.body.results).toEqual([{ id: older.id, outcome: 'stale' }]);
    const after = await harness.getMembership(key);
    expect(after?.metadata.resourceVersion).toBe(created?.metadata.resourceVersion);

    const metrics = (await harness.request<string>('GET', '/metrics')).body;
    for (const outcome of ['applied', 'duplicate', 'stale']) {
      expect(metrics).toMatch(
        new RegExp(
          `policygrant_acl_membership_events_total\\{type="org.member.\\w+",outcome="${outcome}"\\} [1-9]`,
        ),
      );
    }

    const removed = memberEvent('removed', key, at(5));
    expect((await send(removed, producer, STRUCTURED_EVENT)).body.results[0]?.outcome).toBe('applied');
    expect((await harness.getMembership(key))?.spec).toEqual({
      ...key,
      removedAt: removed.time,
      changedAt: removed.time,
      appliedEvents: [
        { source: TEST_EVENT_SOURCE, id: removed.id },
        { source: TEST_EVENT_SOURCE, id: added.id },
      ],
    });
  });

  it('out of order: removed at t2 then added at t1 leaves the user removed, across requests and within a batch', async () => {
    const key = orgKey();
    const removed = memberEvent('removed', key, at(1));
    const added = memberEvent('added', key, at(2));
    expect((await send([removed])).body.results[0]?.outcome).toBe('applied');
    expect((await send([added])).body.results[0]?.outcome).toBe('stale');
    expect((await harness.getMembership(key))?.spec.removedAt).toBe(removed.time);

    const inBatch = orgKey();
    const late = memberEvent('removed', inBatch, at(1));
    const early = memberEvent('added', inBatch, at(2));
    const answer = await send([late, early]);
    // Applied in time order (added, then removed), answered in request order.
    expect(answer.body.results).toEqual([
      { id: late.id, outcome: 'applied' },
      { id: early.id, outcome: 'applied' },
    ]);
    const membership = await harness.getMembership(inBatch);
    expect(membership?.spec.removedAt).toBe(late.time);
    expect(membership?.spec.appliedEvents?.map((event) => event.id)).toEqual([late.id, early.id]);
  });

  it('concurrent requests on one membership: every write is conditioned, the newest event wins', async () => {
    const key = orgKey();
    const events = Array.from({ length: 12 }, (_, index) =>
      memberEvent(index % 2 === 0 ? 'added' : 'removed', key, at(30 - index)),
    );
    const shuffled = [...events].sort(() => Math.random() - 0.5);
    const answers = await Promise.all(shuffled.map((event) => send([event])));
    const outcomes = answers.map((answer) => answer.body.results[0]?.outcome);
    expect(new Set(outcomes)).toEqual(new Set(outcomes.filter((o) => o === 'applied' || o === 'stale')));
    const newest = events.at(-1) as (typeof events)[number];
    expect(outcomes[shuffled.indexOf(newest)]).toBe('applied');
    const membership = await harness.getMembership(key);
    expect(membership?.spec).toMatchObject({ changedAt: newest.time, removedAt: newest.time });
    const applied = shuffled.filter((_, index) => outcomes[index] === 'applied').map((event) => event.id);
    expect(new Set(membership?.spec.appliedEvents?.map((event) => event.id))).toEqual(new Set(applied));
  });

  it('group events make group memberships; a repeat within one batch is a duplicate', async () => {
    const key = { ...orgKey(), groupId: 'data.team_1' };
    const event = memberEvent('added', key, at(1));
    const answer = await send([event, event]);
    expect(answer.body.results.map((result) => result.outcome)).toEqual(['applied', 'duplicate']);
    expect((await harness.getMembership(key))?.spec).toMatchObject({ ...key, changedAt: event.time });
    expect(await harness.getMembership({ organisationId: key.organisationId, userId: key.userId })).toBe(
      undefined,
    );
  });

  it('a malformed event rejects the whole batch, naming its index and field, and applies nothing', async () => {
    const existing = orgKey();
    await send([memberEvent('added', existing, at(30))]);
    const before = await harness.getMembership(existing);
    const fresh = [orgKey(), orgKey(), orgKey()];
    const bad = {
      ...memberEvent('added', orgKey(), at(1)),
      data: { organisationId: randomUUID(), userId: 'nope' },
    };
    const answer = await send([
      ...fresh.map((key) => memberEvent('added', key, at(1))),
      bad,
      memberEvent('removed', existing, at(1)),
    ]);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ type: 'urn:dx:acl:BadRequest' });
    expect(String(answer.body.detail)).toMatch(/^\[3\]\.data\.userId: Invalid UUID/);
    for (const key of fresh) expect(await harness.getMembership(key)).toBe(undefined);
    expect((await harness.getMembership(existing))?.metadata.resourceVersion).toBe(
      before?.metadata.resourceVersion,
    );
  });

  it.each([
    ['an unknown type', { type: 'org.member.promoted' }, '[0].type: type must be one of org.member.added'],
    ['no time', { time: undefined }, '[0].time'],
    ['a time without zone', { time: '2026-01-01T00:00:00' }, '[0].time: Invalid date-time'],
    [
      'a time an hour ahead',
      { time: new Date(Date.now() + 3_600_000).toISOString() },
      '[0].time: time must not',
    ],
    ['another specversion', { specversion: '0.3' }, '[0].specversion'],
    ['an empty id', { id: '' }, '[0].id'],
    [
      'a groupId in an org event',
      { data: { organisationId: randomUUID(), userId: randomUUID(), groupId: 'g' } },
      '[0].data: Unrecognized key',
    ],
  ])('400 for %s', async (_name, override, detail) => {
    const answer = await send([{ ...memberEvent('added', orgKey(), at(1)), ...override }]);
    expect(answer.status).toBe(400);
    expect(String(answer.body.detail)).toContain(detail);
  });

  it('structured mode names the field without an index; a batch over 1,000 events is refused', async () => {
    const event = {
      ...memberEvent('added', orgKey(), at(1)),
      data: { organisationId: 'x', userId: randomUUID() },
    };
    const structured = await send(event, producer, STRUCTURED_EVENT);
    expect(structured.status).toBe(400);
    expect(String(structured.body.detail)).toMatch(/^data\.organisationId: /);
    const tooMany = Array.from({ length: 1_001 }, () => memberEvent('added', orgKey(), at(1)));
    const answer = await send(tooMany);
    expect(answer.status).toBe(400);
    expect(String(answer.body.detail)).toBe('body: a batch holds at most 1000 events');
  });

  it('415 for any other media type, naming the two it accepts', async () => {
    for (const contentType of ['application/json', 'text/plain', 'application/cloudevents+xml']) {
      const answer = await send([memberEvent('added', orgKey(), at(1))], producer, contentType);
      expect(answer.status, contentType).toBe(415);
      expect(answer.body.detail).toBe(
        'request body must be application/cloudevents+json or application/cloudevents-batch+json',
      );
    }
  });
});

describe('PUT and GET .../members', () => {
  function members(caller: Caller, path: string) {
    return harness.request<{ results: { userId: string }[]; paginationInfo: Record<string, number> }>(
      'GET',
      path,
      { caller },
    );
  }

  it('a snapshot adds and removes exactly the difference, writing nothing else; the listing shows the members by userId', async () => {
    const organisationId = randomUUID();
    const [kept, dropped, added, former] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await send(
      [kept, dropped, former].map((userId) => memberEvent('added', { organisationId, userId }, at(5))),
    );
    const formerRemoval = memberEvent('removed', { organisationId, userId: former }, at(4));
    await send([formerRemoval]);
    const path = `/organisations/${organisationId}/members`;
    await until(() => harness.api.cache.membershipsOf(organisationId).length === 3, 'memberships cached');
    const spec = async (userId: string) => (await harness.getMembership({ organisationId, userId }))?.spec;
    const version = async (userId: string) =>
      (await harness.getMembership({ organisationId, userId }))?.metadata.resourceVersion;
    const untouched = { kept: await version(kept), former: await version(former) };

    const answer = await harness.request('PUT', path, { caller: producer, body: { userIds: [kept, added] } });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ results: [{ added: 1, removed: 1 }], detail: '1 added, 1 removed' });
    const addedSpec = await spec(added);
    expect(addedSpec?.removedAt).toBe(undefined);
    expect((await spec(dropped))?.removedAt).toBe(addedSpec?.changedAt);
    // What the snapshot does not change is not written: a member it keeps, a member removed before it.
    expect({ kept: await version(kept), former: await version(former) }).toEqual(untouched);
    expect(await spec(former)).toMatchObject({
      removedAt: formerRemoval.time,
      changedAt: formerRemoval.time,
    });
    // An event from before the snapshot is stale now.
    expect(
      (await send([memberEvent('added', { organisationId, userId: dropped }, at(1))])).body.results[0]
        ?.outcome,
    ).toBe('stale');

    const expected = [kept, added].sort();
    await expect
      .poll(async () => (await members(cosAdmin, path)).body.results.map((row) => row.userId))
      .toEqual(expected);
    const again = await harness.request('PUT', path, { caller: cosAdmin, body: { userIds: [kept, added] } });
    expect(again.body).toMatchObject({ results: [{ added: 0, removed: 0 }] });
  });

  it('group snapshots and listings page by userId', async () => {
    const organisationId = randomUUID();
    const path = `/organisations/${organisationId}/groups/analysts/members`;
    const userIds = Array.from({ length: 5 }, () => randomUUID());
    const answer = await harness.request('PUT', path, { caller: producer, body: { userIds } });
    expect(answer.body).toMatchObject({ results: [{ added: 5, removed: 0 }] });
    const admin = await harness.user({ roles: ['org_admin'], org: organisationId });
    await expect.poll(async () => (await members(admin, path)).body.paginationInfo?.totalHits).toBe(5);
    const page = await members(admin, `${path}?limit=2&offset=1`);
    expect(page.body.results.map((row) => row.userId)).toEqual([...userIds].sort().slice(1, 3));
    expect(page.body.paginationInfo).toEqual({ offset: 1, limit: 2, totalHits: 5 });
    const organisationMembers = await members(admin, `/organisations/${organisationId}/members`);
    expect(organisationMembers.body.results).toEqual([]);
  });

  it('400 naming the field: repeated or malformed userIds, a bad organisation or group id, a bad limit', async () => {
    const organisationId = randomUUID();
    const userId = randomUUID();
    const cases: [string, string, unknown, string][] = [
      [
        'PUT',
        `/organisations/${organisationId}/members`,
        { userIds: [userId, userId] },
        'userIds[1]: repeats userIds[0]',
      ],
      ['PUT', `/organisations/${organisationId}/members`, { userIds: ['x'] }, 'userIds[0]: Invalid UUID'],
      ['PUT', `/organisations/${organisationId}/members`, {}, 'userIds: '],
      ['PUT', `/organisations/NOT-A-UUID/members`, { userIds: [] }, 'organisationId: Invalid UUID'],
      [
        'PUT',
        `/organisations/${organisationId}/groups/a%20b/members`,
        { userIds: [] },
        'groupId: Invalid group id',
      ],
      ['GET', `/organisations/${organisationId}/members?limit=0`, undefined, 'limit: '],
    ];
    for (const [method, path, body, detail] of cases) {
      const answer = await harness.request(method, path, { caller: cosAdmin, ...(body ? { body } : {}) });
      expect(answer.status, path).toBe(400);
      expect(String(answer.body.detail), path).toContain(detail);
    }
  });
});

describe('roles', () => {
  it('events and snapshots: event_producer (bearer or Basic) for its organisations, platform_event_producer or cos_admin; anyone else 403', async () => {
    const basicProducer = harness.basicCaller(BASIC_SECRET, PRODUCER_CLIENT_ID);
    const [boundOrg] = PRODUCER_ORGANISATIONS as [string];
    const scoped = await harness.user({ roles: ['event_producer'], org: boundOrg });
    for (const caller of [producer, scoped, basicProducer, cosAdmin]) {
      expect((await send([memberEvent('added', orgKey(boundOrg), at(1))], caller)).status).toBe(200);
    }
    const organisationId = randomUUID();
    const refused = [
      await harness.user(),
      await harness.user({ roles: ['org_admin'], org: organisationId }),
      harness.basicCaller(),
    ];
    for (const caller of refused) {
      const key = { organisationId, userId: randomUUID() };
      const event = await send([memberEvent('added', key, at(1))], caller);
      expect(event.status).toBe(403);
      expect(event.body).toMatchObject({
        type: 'urn:dx:acl:Forbidden',
        detail: 'requires role event_producer or platform_event_producer or cos_admin',
      });
      const body = { userIds: [key.userId] };
      const snapshot = await harness.request('PUT', `/organisations/${organisationId}/members`, {
        caller,
        body,
      });
      expect(snapshot.status).toBe(403);
      expect(await harness.getMembership(key)).toBe(undefined);
    }
  });

  it("listings: an org_admin of that organisation or cos_admin; another organisation's admin and producers 403", async () => {
    const organisationId = randomUUID();
    const path = `/organisations/${organisationId}/groups/g1/members`;
    expect((await harness.request('GET', path, { caller: cosAdmin })).status).toBe(200);
    const ownAdmin = await harness.user({ roles: ['org_admin'], org: organisationId });
    expect((await harness.request('GET', path, { caller: ownAdmin })).status).toBe(200);
    const otherAdmin = await harness.user({ roles: ['org_admin'], org: randomUUID() });
    const other = await harness.request('GET', path, { caller: otherAdmin });
    expect(other.status).toBe(403);
    expect(other.body.detail).toBe(
      `only an org_admin of organisation ${organisationId} or a cos_admin may list its members`,
    );
    const byProducer = await harness.request('GET', path, { caller: producer });
    expect(byProducer.status).toBe(403);
    expect(byProducer.body.detail).toBe('requires role org_admin or cos_admin');
  });
});

describe('a producer speaks only for the organisations it is bound to', () => {
  const database = new AuditDatabase(harness);
  const notBound = (field: string, organisationId: string) =>
    `${field}: this producer is not bound to organisation ${organisationId}; nothing was applied`;

  it('a batch with one event of another organisation is refused whole (403 naming its index), audited, nothing applied', async () => {
    const [own, foreign] = [randomUUID(), randomUUID()];
    const scoped = await harness.user({ roles: ['event_producer'], org: own });
    const ownKeys = [orgKey(own), { ...orgKey(own), groupId: 'g1' }];
    // The attack: the producer adds itself to another organisation, and so to that organisation's GROUP grants.
    const intruder = { organisationId: foreign, userId: scoped.id };
    const requestId = `req-${randomUUID()}`;
    const answer = await harness.request('POST', '/events', {
      caller: scoped,
      body: [
        memberEvent('added', ownKeys[0] as MembershipKey, at(1)),
        memberEvent('added', intruder, at(1)),
        memberEvent('added', ownKeys[1] as MembershipKey, at(1)),
      ],
      headers: { 'content-type': EVENT_BATCH, 'x-request-id': requestId },
    });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({
      type: 'urn:dx:acl:Forbidden',
      title: 'Not bound to the organisation',
      detail: notBound('[1].data.organisationId', foreign),
    });
    for (const key of [...ownKeys, intruder]) expect(await harness.getMembership(key)).toBe(undefined);
    const records = await database.ofRequest(requestId);
    expect(
      records.map((record) => [record.action, record.target.organisationId, record.outcome.status]),
    ).toEqual([
      ['membership.added', own, 403],
      ['membership.added', foreign, 403],
      ['membership.added', own, 403],
    ]);
    expect(records.every((record) => record.actor.id === scoped.id)).toBe(true);

    const single = await send(memberEvent('added', intruder, at(1)), scoped, STRUCTURED_EVENT);
    expect(single.status).toBe(403);
    expect(single.body.detail).toBe(notBound('data.organisationId', foreign));
    expect(
      (
        await send(
          ownKeys.map((key) => memberEvent('added', key, at(1))),
          scoped,
        )
      ).status,
    ).toBe(200);
  });

  it("a snapshot of another organisation or its group is refused and its members stay; the own organisation's applies", async () => {
    const [own, foreign] = [randomUUID(), randomUUID()];
    const scoped = await harness.user({ roles: ['event_producer'], org: own });
    const member = orgKey(foreign);
    await send([memberEvent('added', member, at(5))]);
    const before = await harness.getMembership(member);
    for (const path of [`/organisations/${foreign}/members`, `/organisations/${foreign}/groups/g1/members`]) {
      const emptied = await harness.request('PUT', path, { caller: scoped, body: { userIds: [] } });
      expect(emptied.status, path).toBe(403);
      expect(emptied.body.detail).toBe(notBound('organisationId', foreign));
    }
    expect((await harness.getMembership(member))?.metadata.resourceVersion).toBe(
      before?.metadata.resourceVersion,
    );
    const ownSnapshot = await harness.request('PUT', `/organisations/${own}/members`, {
      caller: scoped,
      body: { userIds: [scoped.id] },
    });
    expect(ownSnapshot.status).toBe(200);
  });

  it("an event_producer JWT without an organisation claim speaks for none; a Basic one for its credential's organisations", async () => {
    const unbound = await harness.user({ roles: ['event_producer'] });
    const organisationId = randomUUID();
    const answer = await send([memberEvent('added', orgKey(organisationId), at(1))], unbound);
    expect(answer.status).toBe(403);
    expect(answer.body.detail).toBe(notBound('[0].data.organisationId', organisationId));
    const basicProducer = harness.basicCaller(BASIC_SECRET, PRODUCER_CLIENT_ID);
    const bound = PRODUCER_ORGANISATIONS.map((org) => memberEvent('added', orgKey(org), at(1)));
    expect((await send(bound, basicProducer)).status).toBe(200);
    const other = await send([...bound, memberEvent('added', orgKey(organisationId), at(1))], basicProducer);
    expect(other.status).toBe(403);
    expect(other.body.detail).toBe(notBound('[2].data.organisationId', organisationId));
  });
});

describe('Kubernetes unreachable', () => {
  let proxy: TcpProxy;
  let api: RunningAclApi;

  beforeAll(async () => {
    const server = new URL(harness.kubeConfig.getCurrentCluster()?.server as string);
    proxy = await TcpProxy.start({ target: `${server.hostname}:${server.port}` });
    const port = Number(proxy.endpoint.split(':')[1]);
    api = await startAclApi(await harness.config({ kubeTimeoutMs: 1_000 }), {
      kubeConfig: harness.kubeConfigVia(port),
    });
  });

  afterAll(async () => {
    await api?.stop();
    await proxy?.close();
  });

  it('events and snapshots answer 503 naming kubernetes; a retried batch then applies what is left', async () => {
    const post = (events: unknown) =>
      fetch(`${api.url}/events`, {
        method: 'POST',
        headers: { authorization: producer.authorization, 'content-type': EVENT_BATCH },
        body: JSON.stringify(events),
      });
    const key = orgKey();
    const first = memberEvent('added', key, at(2));
    expect((await post([first])).status).toBe(200);
    proxy.pause('drop');
    const second = memberEvent('removed', key, at(1));
    const failed = await post([first, second]);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({
      type: 'urn:dx:acl:DependencyUnavailable',
      detail: 'kubernetes is unavailable',
    });
    const snapshot = await fetch(`${api.url}/organisations/${key.organisationId}/members`, {
      method: 'PUT',
      headers: { authorization: producer.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ userIds: [randomUUID()] }),
    });
    expect(snapshot.status).toBe(503);
    expect(((await snapshot.json()) as { detail: string }).detail).toBe('kubernetes is unavailable');
    proxy.resume();
    let retried: EventResults | undefined;
    await until(async () => {
      const answer = await post([first, second]);
      if (answer.status === 200) retried = (await answer.json()) as EventResults;
      return retried !== undefined;
    }, 'the retried batch answered 200');
    expect(retried?.results.map((result) => result.outcome)).toEqual(['duplicate', 'applied']);
    expect((await harness.getMembership(key))?.spec.removedAt).toBe(second.time);
  });
});
