import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relationship, SpiceDBClient } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { signToken } from '../../../unit/auth/support/tokens.js';
import { uniqueId } from '../../support/cluster.js';
import type { DecisionServiceUnderTest } from '../support/decision-service.js';
import { startServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// The AuthZEN routes against a real SpiceDB, relationships written as the controller projects them
// (docs/controller.md): grants as `<access>_consumer` relationships, GROUP grants to organization#member,
// delegations as `<relation>_delegate` with the owner ⇄ agent relationships.
// A SpiceDB of the file's own: every message of the Watch is one of its changes (afterWatchDelivers).
let own: ServiceOnOwnSpiceDB;
let client: SpiceDBClient;
let service: DecisionServiceUnderTest;

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('authzen');
  ({ service } = own);
  client = own.spicedb.client;
});

afterAll(() => own?.stop());

const inAnHour = () => new Date(Date.now() + 3_600_000);
const resourceOf = (item: string) => ({ type: 'resource', id: encodeObjectId(item) });
const user = (id: string) => ({ type: 'user', id: encodeObjectId(id) });
const agentObject = (id: string) => ({ type: 'agent', id: encodeObjectId(id) });

function grant(item: string, userId: string, expiresAt: Date = inAnHour()): Relationship {
  return { resource: resourceOf(item), relation: 'api_consumer', subject: user(userId), expiresAt };
}

const touch = (...relationships: Relationship[]) =>
  client.writeRelationships(
    relationships.map((relationship) => ({ operation: 'touch' as const, relationship })),
  );

interface Decision {
  decision: boolean;
}
interface SearchAnswer<T> {
  results: T[];
  page: { next_token: string; count: number };
}

const evaluation = (subjectId: string, item: string, action = 'api', type = 'user') => ({
  subject: { type, id: subjectId },
  resource: { type: 'resource', id: item },
  action: { name: action },
});

async function decide(body: unknown): Promise<boolean> {
  const { status, body: answer } = await service.post<Decision>('/access/v1/evaluation', body);
  expect(status).toBe(200);
  return answer.decision;
}

/** Every page of a search, following next_token; fails on a page that is not 200. */
async function searchPages<T>(
  path: string,
  body: Record<string, unknown>,
  limit?: number,
): Promise<SearchAnswer<T>[]> {
  const pages: SearchAnswer<T>[] = [];
  let token = '';
  do {
    const page = { ...(token ? { token } : {}), ...(limit ? { limit } : {}) };
    const { status, body: answer } = await service.post<SearchAnswer<T>>(path, { ...body, page });
    expect(status, JSON.stringify(answer)).toBe(200);
    expect(answer.page.count).toBe(answer.results.length);
    pages.push(answer);
    token = answer.page.next_token;
  } while (token);
  return pages;
}

/** The results of every page of a search. */
async function searchAll<T>(path: string, body: Record<string, unknown>, limit?: number): Promise<T[]> {
  return (await searchPages<T>(path, body, limit)).flatMap((page) => page.results);
}

/** Parties of its own: a consumer with a direct grant, an organisation whose members hold a GROUP grant. */
async function grantedParties() {
  const item = `urn:dx:item:${uniqueId('authzen')}`;
  const consumer = uniqueId('consumer');
  const member = uniqueId('member');
  const organisation = uniqueId('org');
  const orgObject = { type: 'organization', id: encodeObjectId(organisation) };
  const zedToken = await service.afterWatchDelivers(() =>
    touch(
      grant(item, consumer),
      { resource: orgObject, relation: 'member', subject: user(member) },
      {
        resource: resourceOf(item),
        relation: 'api_consumer',
        subject: { ...orgObject, relation: 'member' },
        expiresAt: inAnHour(),
      },
    ),
  );
  return { item, consumer, member, organisation, zedToken };
}

describe('POST /access/v1/evaluation', () => {
  it('permits direct and GROUP grants, denies others and expired grants', async () => {
    const { item, consumer, member } = await grantedParties();
    const expired = uniqueId('expired');
    await service.afterWatchDelivers(() => touch(grant(item, expired, new Date(Date.now() + 1_000))));
    expect(await decide(evaluation(consumer, item))).toBe(true);
    expect(await decide(evaluation(member, item))).toBe(true);
    expect(await decide(evaluation('stranger', item))).toBe(false);
    expect(await decide(evaluation(consumer, item, 'file'))).toBe(false);
    await expect.poll(() => decide(evaluation(expired, item)), { timeout: 15_000 }).toBe(false);
  });

  it('permits an agent only while its delegation and its owner access hold (owner ∩ agent)', async () => {
    const { item, consumer } = await grantedParties();
    const agent = `urn:dx:agent:${uniqueId('agent')}`;
    await service.afterWatchDelivers(() =>
      touch(
        { resource: agentObject(agent), relation: 'owner', subject: user(consumer) },
        { resource: user(consumer), relation: 'agent', subject: agentObject(agent) },
        {
          resource: resourceOf(item),
          relation: 'querier_delegate',
          subject: agentObject(agent),
          expiresAt: inAnHour(),
        },
      ),
    );
    expect(await decide(evaluation(agent, item, 'delegated_querier', 'agent'))).toBe(true);
    const subjects = await searchAll<{ type: string; id: string }>('/access/v1/search/subject', {
      subject: { type: 'agent' },
      resource: { type: 'resource', id: item },
      action: { name: 'delegated_querier' },
    });
    expect(subjects).toEqual([{ type: 'agent', id: agent }]);
    await service.afterWatchDelivers(() =>
      client.deleteRelationships({
        resourceType: 'resource',
        resourceId: encodeObjectId(item),
        relation: 'api_consumer',
        subject: { type: 'user', id: encodeObjectId(consumer) },
      }),
    );
    expect(await decide(evaluation(agent, item, 'delegated_querier', 'agent'))).toBe(false);
  });

  it('answers 400 naming a type or action outside the vocabulary, with decision false', async () => {
    const cases: [unknown, string][] = [
      [evaluation('u', 'i', 'fly'), 'action.name'],
      [{ ...evaluation('u', 'i'), subject: { type: 'robot', id: 'u' } }, 'subject.type'],
      [{ ...evaluation('u', 'i'), resource: { type: 'thing', id: 'i' } }, 'resource.type'],
    ];
    for (const [body, field] of cases) {
      const { status, body: answer } = await service.post<{ detail: string; decision: boolean }>(
        '/access/v1/evaluation',
        body,
      );
      expect(status).toBe(400);
      expect(answer.detail).toContain(field);
      expect(answer.decision).toBe(false);
    }
  });

  it('answers 401 without credentials and 403 to a caller without the decision role', async () => {
    const noCredentials = await fetch(`${service.url}/access/v1/evaluation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(evaluation('u', 'i')),
    });
    expect(noCredentials.status).toBe(401);
    expect(((await noCredentials.json()) as Decision).decision).toBe(false);
    const stranger = `Bearer ${await signToken(service.key, { roles: ['someone'] }, { expiresIn: 600 })}`;
    for (const path of ['/access/v1/evaluation', '/access/v1/evaluations', '/access/v1/search/resource']) {
      const { status, body } = await service.post<Decision>(path, evaluation('u', 'i'), {
        authorization: stranger,
      });
      expect(status).toBe(403);
      expect(body.decision).toBe(false);
    }
  });
});

describe('POST /access/v1/evaluations', () => {
  it('answers in order with defaults and overrides, under each evaluations_semantic', async () => {
    const { item, consumer } = await grantedParties();
    const batch = (semantic?: string) => ({
      subject: { type: 'user', id: consumer },
      action: { name: 'api' },
      evaluations: [
        { resource: { type: 'resource', id: item } },
        { resource: { type: 'resource', id: 'urn:dx:item:none' } },
        { resource: { type: 'DATABANK', id: item } },
        { resource: { type: 'resource', id: item }, subject: { type: 'user', id: 'stranger' } },
      ],
      ...(semantic ? { options: { evaluations_semantic: semantic } } : {}),
    });
    const decisions = async (semantic?: string) => {
      const { status, body } = await service.post<{ evaluations: Decision[] }>(
        '/access/v1/evaluations',
        batch(semantic),
      );
      expect(status).toBe(200);
      return body.evaluations.map((answer) => answer.decision);
    };
    expect(await decisions()).toEqual([true, false, true, false]);
    expect(await decisions('execute_all')).toEqual([true, false, true, false]);
    expect(await decisions('deny_on_first_deny')).toEqual([true, false]);
    expect(await decisions('permit_on_first_permit')).toEqual([true]);
  });

  it('answers 400 over the maximum batch and for an evaluation missing a part, naming it', async () => {
    const tooMany = { ...evaluation('u', 'i'), evaluations: Array.from({ length: 101 }, () => ({})) };
    expect((await service.post('/access/v1/evaluations', tooMany)).status).toBe(400);
    const missing = { evaluations: [{ subject: { type: 'user', id: 'u' }, action: { name: 'api' } }] };
    const { status, body } = await service.post<{ detail: string }>('/access/v1/evaluations', missing);
    expect(status).toBe(400);
    expect(body.detail).toContain('evaluations[0].resource');
  });
});

describe('POST /access/v1/search/*', () => {
  it('lists the subjects: direct grants and organisation members, not strangers', async () => {
    const { item, consumer, member } = await grantedParties();
    const subjects = await searchAll<{ id: string }>('/access/v1/search/subject', {
      subject: { type: 'user' },
      resource: { type: 'resource', id: item },
      action: { name: 'api' },
    });
    expect(subjects.map((subject) => subject.id).sort()).toEqual([consumer, member].sort());
  });

  it('lists the actions a subject has on an item', async () => {
    const { item, consumer } = await grantedParties();
    const actions = await searchAll<{ name: string }>('/access/v1/search/action', {
      subject: { type: 'user', id: consumer },
      resource: { type: 'resource', id: item },
    });
    expect(actions).toEqual([{ name: 'api' }]);
  });

  it('pages over 5,000 resources, each exactly once, and a revoked pair is not listed right after', async () => {
    const consumer = uniqueId('many');
    const items = Array.from({ length: 5_000 }, (_, index) => `urn:dx:item:${consumer}-${index}`);
    await client.writeRelationshipsInBatches(
      items.map((item) => ({ operation: 'touch' as const, relationship: grant(item, consumer) })),
    );
    const search = {
      subject: { type: 'user', id: consumer },
      resource: { type: 'resource' },
      action: { name: 'api' },
    };
    // Written past the Watch: a search sees them once it delivered the last batch; each pass reads one snapshot.
    const pass = () => searchAll<{ type: string; id: string }>('/access/v1/search/resource', search, 700);
    await expect.poll(async () => (await pass()).length).toBe(5_000);
    const found = await pass();
    expect(found).toHaveLength(5_000);
    expect(new Set(found.map((result) => result.id))).toEqual(new Set(items));
    // Five full pages: the fifth says it is the last (it looked one page ahead), and no sixth, empty one is asked.
    const pages = await searchPages<{ id: string }>('/access/v1/search/resource', search, 1_000);
    expect(pages.map((page) => page.page.count)).toEqual([1_000, 1_000, 1_000, 1_000, 1_000]);
    expect(new Set(pages.flatMap((page) => page.results.map((result) => result.id)))).toEqual(new Set(items));

    const revoked = items[42] ?? '';
    await service.afterWatchDelivers(() =>
      client.deleteRelationships({
        resourceType: 'resource',
        resourceId: encodeObjectId(revoked),
        relation: 'api_consumer',
        subject: { type: 'user', id: encodeObjectId(consumer) },
      }),
    );
    const after = await searchAll<{ id: string }>('/access/v1/search/resource', search);
    expect(after).toHaveLength(4_999);
    expect(after.map((result) => result.id)).not.toContain(revoked);
  });

  it('pages over 5,000 subjects in id order, each exactly once', async () => {
    const item = `urn:dx:item:${uniqueId('popular')}`;
    const users = Array.from({ length: 5_000 }, (_, index) => `${item}-user-${index}`);
    await client.writeRelationshipsInBatches(
      users.map((userId) => ({ operation: 'touch' as const, relationship: grant(item, userId) })),
    );
    const pass = () =>
      searchAll<{ id: string }>(
        '/access/v1/search/subject',
        { subject: { type: 'user' }, resource: { type: 'resource', id: item }, action: { name: 'api' } },
        700,
      );
    await expect.poll(async () => (await pass()).length).toBe(5_000);
    const found = await pass();
    const ids = found.map((result) => result.id);
    expect(ids).toHaveLength(5_000);
    expect(new Set(ids)).toEqual(new Set(users));
  });

  it('rejects a token of another search with 400 naming page.token', async () => {
    const { body: first } = await service.post<SearchAnswer<unknown>>('/access/v1/search/subject', {
      subject: { type: 'user' },
      resource: { type: 'resource', id: 'urn:dx:item:none' },
      action: { name: 'api' },
      page: { token: 'bm90LWEtdG9rZW4' },
    });
    expect(JSON.stringify(first)).toContain('page.token');
  });
});

describe('GET /.well-known/authzen-configuration', () => {
  it('is not served without a public URL, whatever Host the request names', async () => {
    const response = await fetch(`${service.url}/.well-known/authzen-configuration`);
    expect(response.status).toBe(404);
    expect(await response.text()).toContain('DECISION_PUBLIC_URL');
  });
});
