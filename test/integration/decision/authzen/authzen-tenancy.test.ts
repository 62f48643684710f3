import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_CLIENT_ROLE } from '../../../../src/config/decision-clients.js';
import { PLATFORM_SEARCH_CLIENT_ROLE, SEARCH_CLIENT_ROLE } from '../../../../src/decision/check-callers.js';
import type { Relationship, SpiceDBClient } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { signToken } from '../../../unit/auth/support/tokens.js';
import { uniqueId } from '../../support/cluster.js';
import type { DecisionServiceUnderTest } from '../support/decision-service.js';
import { startServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// Searches as a tenant boundary, and page tokens that continue exactly one request of one caller, against a real
// SpiceDB with relationships written as the controller projects them: an item's organisation as
// `resource:<item>#owner@organization:<org>`, grants as `api_consumer`, GROUP grants to organization#member.
let own: ServiceOnOwnSpiceDB;
let client: SpiceDBClient;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('authzen-tenancy', { limits: { perSubject: { check: RATE_LIMIT } } });
  ({ service } = own);
  client = own.spicedb.client;
});

afterAll(() => own?.stop());

/** Large enough for every test here but the batch's, which spends it with its own caller. */
const RATE_LIMIT = { requests: 150, windowMs: 60_000 };

const inAnHour = () => new Date(Date.now() + 3_600_000);
const resourceOf = (item: string) => ({ type: 'resource', id: encodeObjectId(item) });
const organisationOf = (organisation: string) => ({ type: 'organization', id: encodeObjectId(organisation) });
const user = (id: string) => ({ type: 'user', id: encodeObjectId(id) });
const grant = (item: string, userId: string): Relationship => ({
  resource: resourceOf(item),
  relation: 'api_consumer',
  subject: user(userId),
  expiresAt: inAnHour(),
});
const write = (operation: 'touch' | 'delete', ...relationships: Relationship[]) =>
  service.afterWatchDelivers(() =>
    client.writeRelationships(relationships.map((relationship) => ({ operation, relationship }))),
  );

/** An organisation's item with a consumer, and members of the organisation holding a GROUP grant on it. */
async function organisationWithItem(consumer: string) {
  const organisation = randomUUID();
  const item = `urn:dx:item:${uniqueId('tenancy')}`;
  const member = uniqueId('member');
  await write(
    'touch',
    { resource: resourceOf(item), relation: 'owner', subject: organisationOf(organisation) },
    grant(item, consumer),
    { resource: organisationOf(organisation), relation: 'member', subject: user(member) },
    {
      resource: resourceOf(item),
      relation: 'api_consumer',
      subject: { ...organisationOf(organisation), relation: 'member' },
      expiresAt: inAnHour(),
    },
  );
  return { organisation, item, member };
}

/** A bearer for an enforcement point with these roles, bound to `organisation` when given. */
async function bearer(roles: string[], organisation?: string, subject = randomUUID()): Promise<string> {
  const claims = { roles, ...(organisation === undefined ? {} : { org: organisation }) };
  return `Bearer ${await signToken(service.key, claims, { subject, expiresIn: 3_600 })}`;
}

const as = (authorization: string) => ({ authorization });

interface Found {
  results: { id: string }[];
  page: { next_token: string; count: number };
}

async function search(path: string, body: unknown, authorization = service.authorization) {
  const { status, body: answer } = await service.post<Found>(
    `/access/v1/search/${path}`,
    body,
    as(authorization),
  );
  expect(status, JSON.stringify(answer)).toBe(200);
  return answer;
}

const ids = (found: Found) => found.results.map((result) => result.id);
const subjectSearch = (item: string, page?: object) => ({
  subject: { type: 'user' },
  resource: { type: 'resource', id: item },
  action: { name: 'api' },
  ...(page ? { page } : {}),
});
const resourceSearch = (consumer: string, page?: object) => ({
  subject: { type: 'user', id: consumer },
  resource: { type: 'resource' },
  action: { name: 'api' },
  ...(page ? { page } : {}),
});

describe('an enforcement point bound to an organisation', () => {
  it("never lists another organisation's item, member or consumer, and is denied its items", async () => {
    const consumer = uniqueId('consumer');
    const ours = await organisationWithItem(consumer);
    const theirs = await organisationWithItem(consumer);
    const scoped = await bearer([DECISION_CLIENT_ROLE, SEARCH_CLIENT_ROLE], ours.organisation);

    // The platform-wide caller finds both items, and both items' members.
    expect(new Set(ids(await search('resource', resourceSearch(consumer))))).toEqual(
      new Set([ours.item, theirs.item]),
    );
    expect(ids(await search('subject', subjectSearch(theirs.item)))).toContain(theirs.member);

    expect(ids(await search('resource', resourceSearch(consumer), scoped))).toEqual([ours.item]);
    expect(ids(await search('resource', resourceSearch(theirs.member), scoped))).toEqual([]);
    expect(new Set(ids(await search('subject', subjectSearch(ours.item), scoped)))).toEqual(
      new Set([consumer, ours.member]),
    );
    expect(await search('subject', subjectSearch(theirs.item), scoped)).toEqual({
      results: [],
      page: { next_token: '', count: 0 },
    });
    const actions = (item: string) =>
      search(
        'action',
        { subject: { type: 'user', id: consumer }, resource: { type: 'resource', id: item } },
        scoped,
      );
    expect((await actions(theirs.item)).results).toEqual([]);
    expect((await actions(ours.item)).results).toEqual([{ name: 'api' }]);

    // Its evaluations, single, batched and through /v1/check: permitted in its organisation only.
    const evaluation = (item: string) => ({
      subject: { type: 'user', id: consumer },
      resource: { type: 'resource', id: item },
      action: { name: 'api' },
    });
    const decide = async (item: string, authorization: string) =>
      (
        await service.post<{ decision: boolean }>(
          '/access/v1/evaluation',
          evaluation(item),
          as(authorization),
        )
      ).body.decision;
    expect(await decide(theirs.item, service.authorization)).toBe(true);
    expect(await decide(theirs.item, scoped)).toBe(false);
    expect(await decide(ours.item, scoped)).toBe(true);
    const batch = await service.post<{ evaluations: { decision: boolean }[] }>(
      '/access/v1/evaluations',
      { evaluations: [evaluation(ours.item), evaluation(theirs.item)] },
      as(scoped),
    );
    expect(batch.body.evaluations).toEqual([{ decision: true }, { decision: false }]);
    const check = (item: string) =>
      service.check(
        {
          subject_type: 'user',
          subject_id: consumer,
          resource_type: 'resource',
          resource_id: item,
          relation: 'api',
        },
        as(scoped),
      );
    expect((await check(theirs.item)).body.result.allowed).toBe(false);
    expect((await check(ours.item)).body.result.allowed).toBe(true);
  });

  it('may not search without a search role, nor with one while bound to no organisation', async () => {
    const { item } = await organisationWithItem(uniqueId('consumer'));
    for (const authorization of [
      await bearer([DECISION_CLIENT_ROLE]),
      await bearer([DECISION_CLIENT_ROLE], randomUUID()),
      await bearer([SEARCH_CLIENT_ROLE]),
    ]) {
      for (const [path, body] of [
        ['subject', subjectSearch(item)],
        ['resource', resourceSearch('someone')],
        ['action', { subject: { type: 'user', id: 'someone' }, resource: { type: 'resource', id: item } }],
      ] as const) {
        const { status, body: answer } = await service.post<{ detail: string; decision: boolean }>(
          `/access/v1/search/${path}`,
          body,
          as(authorization),
        );
        expect(status).toBe(403);
        expect(answer).toMatchObject({ decision: false, detail: expect.stringMatching(/may search/) });
      }
    }
  });
});

describe('page tokens', () => {
  it("refuse an edited, a forged, another caller's and another request's token with 400 naming page.token", async () => {
    const consumer = uniqueId('consumer');
    for (let index = 0; index < 3; index++) await organisationWithItem(consumer);
    const first = await search('resource', resourceSearch(consumer, { limit: 1 }));
    const token = first.page.next_token;
    expect(token).not.toBe('');
    const [body = '', signature = ''] = token.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const edited = `${Buffer.from(JSON.stringify({ ...payload, l: 2 })).toString('base64url')}.${signature}`;
    const forged = Buffer.from(JSON.stringify(payload)).toString('base64url');
    const otherCaller = await bearer([PLATFORM_SEARCH_CLIENT_ROLE]);
    for (const [request, authorization] of [
      [resourceSearch(consumer, { limit: 1, token: edited }), service.authorization],
      [resourceSearch(consumer, { limit: 1, token: forged }), service.authorization],
      [resourceSearch(consumer, { limit: 1, token }), otherCaller],
      [resourceSearch(consumer, { limit: 2, token }), service.authorization],
      [{ ...resourceSearch(consumer, { limit: 1, token }), context: { time: 'now' } }, service.authorization],
      [resourceSearch(uniqueId('someone-else'), { limit: 1, token }), service.authorization],
    ] as const) {
      const { status, body: answer } = await service.post<{ detail: string; decision: boolean }>(
        '/access/v1/search/resource',
        request,
        as(authorization),
      );
      expect(status).toBe(400);
      expect(answer).toMatchObject({ decision: false, detail: expect.stringMatching(/^page\.token: /) });
    }
    // The token itself still continues its own request.
    expect((await search('resource', resourceSearch(consumer, { limit: 1, token }))).page.count).toBe(1);
  });

  it('continue no search onto a pair whose revocation was acknowledged after its first page', async () => {
    const consumer = uniqueId('consumer');
    const items = await Promise.all([0, 1, 2].map(() => organisationWithItem(consumer)));
    /** Every page of a search of one result a page; `revoke` runs after the first, given what it listed. */
    const pages = async (
      path: 'resource' | 'subject',
      body: (page: object) => unknown,
      revoke: (listed: string[]) => Promise<string>,
    ) => {
      const first = await search(path, body({ limit: 1 }));
      const revoked = await revoke(ids(first));
      const found = ids(first);
      let token = first.page.next_token;
      while (token) {
        const page = await search(path, body({ limit: 1, token }));
        found.push(...ids(page));
        token = page.page.next_token;
      }
      return { found, revoked };
    };
    const notIn = (listed: string[], all: string[]) => all.find((id) => !listed.includes(id)) as string;

    // search/resource: the consumer's grant on an item the first page did not list, revoked.
    const all = ids(await search('resource', resourceSearch(consumer)));
    expect(all).toHaveLength(3);
    const resources = await pages(
      'resource',
      (page) => resourceSearch(consumer, page),
      async (listed) => {
        const revoked = notIn(listed, all);
        await write('delete', grant(revoked, consumer));
        return revoked;
      },
    );
    expect(resources.found.sort()).toEqual(all.filter((item) => item !== resources.revoked).sort());

    // search/subject (an answer the service holds between pages): the subject after the first page revoked,
    // the member by its removal from the organisation, the consumer by its grant. On an item whose consumer
    // grant the search/resource part left in place (which item it revoked depends on SpiceDB's order).
    const { item, organisation, member } = items.find(
      (candidate) => candidate.item !== resources.revoked,
    ) as (typeof items)[0];
    const subjects = ids(await search('subject', subjectSearch(item)));
    expect(subjects.sort()).toEqual([consumer, member].sort());
    const listed = await pages(
      'subject',
      (page) => subjectSearch(item, page),
      async (first) => {
        const revoked = notIn(first, subjects);
        await write(
          'delete',
          revoked === member
            ? { resource: organisationOf(organisation), relation: 'member', subject: user(member) }
            : grant(item, consumer),
        );
        return revoked;
      },
    );
    expect(listed.found).toEqual(subjects.filter((subject) => subject !== listed.revoked));
  });
});

describe('the rate limit', () => {
  it('charges a batch of evaluations one unit per evaluation', async () => {
    const authorization = await bearer([DECISION_CLIENT_ROLE]);
    const batch = {
      subject: { type: 'user', id: 'someone' },
      action: { name: 'api' },
      evaluations: Array.from({ length: 100 }, (_, index) => ({
        resource: { type: 'resource', id: `urn:dx:item:batch-${index}` },
      })),
    };
    const first = await service.post('/access/v1/evaluations', batch, as(authorization));
    expect(first.status).toBe(200);
    const second = await service.post<{ detail: string; decision: boolean }>(
      '/access/v1/evaluations',
      batch,
      as(authorization),
    );
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({
      decision: false,
      detail: expect.stringMatching(/100 units of work/),
    });
  });
});
