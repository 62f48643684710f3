import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_BATCH, memberEvent } from '../../support/member-events.js';
import { AclHarness, individual, type Caller } from './support/acl-harness.js';

// The write limit counts the work a request causes, on a real ACL API: a batch of N events is N units, a
// snapshot the memberships it changes, a create of N policies N; a request over the limit is a 429 that
// changes nothing.

const WRITE = { requests: 5, windowMs: 60_000 };

const harness = new AclHarness();
let itemId: string;
let provider: Caller;

beforeAll(async () => {
  await harness.start('acl-weighted-limits', { limits: { perSubject: { write: WRITE } } });
  provider = await harness.user();
  itemId = (await harness.catalogItem({ ownerId: provider.id, organisationId: randomUUID() })).spec.itemId;
});

afterAll(() => harness.stop());

interface Problem {
  type: string;
  detail: string;
}

const producer = () => harness.user({ roles: ['platform_event_producer'] });

function send(caller: Caller, events: unknown[]) {
  return harness.request<Problem>('POST', '/events', {
    caller,
    body: events,
    headers: { 'content-type': EVENT_BATCH },
  });
}

function snapshot(caller: Caller, organisationId: string, userIds: string[]) {
  return harness.request<Problem>('PUT', `/organisations/${organisationId}/members`, {
    caller,
    body: { userIds },
  });
}

function expectLimited(answer: { status: number; body: Problem }, detail: RegExp): void {
  expect(answer.status).toBe(429);
  expect(answer.body.type).toBe('urn:dx:acl:TooManyRequests');
  expect(answer.body.detail).toMatch(detail);
}

const addedEvents = (organisationId: string, count: number) =>
  Array.from({ length: count }, () => memberEvent('added', { organisationId, userId: randomUUID() }));

describe('write limits weighted by work', () => {
  it('counts a batch of N events as N: the next batch past the limit is refused whole', async () => {
    const caller = await producer();
    const organisationId = randomUUID();
    expect((await send(caller, addedEvents(organisationId, 3))).status).toBe(200);
    const refused = addedEvents(organisationId, 3);
    expectLimited(await send(caller, refused), /rate limit exceeded by 3 units of work: 5 requests per 60 s/);
    for (const event of refused) expect(await harness.getMembership(event.data)).toBeUndefined();
  });

  it('refuses a batch larger than the limit allows at all, naming it', async () => {
    const caller = await producer();
    const organisationId = randomUUID();
    const events = addedEvents(organisationId, WRITE.requests + 1);
    expectLimited(await send(caller, events), /6 units of work, more than the limit allows at all.*split it/);
    expect(await harness.getMembership(events[0]?.data ?? { organisationId, userId: '' })).toBeUndefined();
  });

  it('counts a snapshot by the memberships it changes: an unchanged one is one unit', async () => {
    const caller = await producer();
    const organisationId = randomUUID();
    const userIds = [randomUUID(), randomUUID(), randomUUID()];
    expect((await snapshot(caller, organisationId, userIds)).status).toBe(200);
    expect((await snapshot(caller, organisationId, userIds)).status).toBe(200);
    expectLimited(await snapshot(caller, organisationId, []), /by 3 units of work/);
    for (const userId of userIds) {
      expect((await harness.getMembership({ organisationId, userId }))?.spec.removedAt).toBeUndefined();
    }
  });

  it('counts a create of N policies as N', async () => {
    const request = (count: number) =>
      harness.request<Problem>('POST', '/policy', {
        caller: provider,
        body: { request: Array.from({ length: count }, () => individual(itemId, randomUUID())) },
      });
    expect((await request(4)).status).toBe(201);
    expectLimited(await request(2), /by 2 units of work/);
  });
});
