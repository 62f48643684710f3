import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relationship, SpiceDBClient } from '../../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { uniqueId } from '../../support/cluster.js';
import type { DecisionServiceUnderTest } from '../support/decision-service.js';
import { startServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';
import type { ServiceOnOwnSpiceDB } from '../support/service-on-own-spicedb.js';

// Every request example of the AuthZEN Authorization API 1.0 specification (final, January 2026), sent as
// printed but in this decision point's vocabulary: the specification's users are users; its accounts, books,
// documents and todos are items (`resource`, ids made unique per run); `can_read` and `read` are `viewer`,
// `can_edit` and `extend-loan` `editor`. Every other member, `properties`, `context` and `options` included, is
// the specification's own. Each answer is 200 with the decision the examples' grants give. The resource
// searches ask for the accounts of a subject of their own (SEARCHER, the examples' alice): every item here is a
// `resource`, so alice's other items would be listed too.
const PUBLIC_URL = 'https://pdp.example.com';
let own: ServiceOnOwnSpiceDB;
let client: SpiceDBClient;
let service: DecisionServiceUnderTest;
const run = uniqueId('spec');
const user = (name: string) => `${name}-${run}@example.com`;
const item = (kind: string, id: string) => `urn:dx:item:${run}:${kind}:${id}`;
const ALICE = user('alice');
const BOB = user('bob');
const SEARCHER = user('alice-of-three-accounts');
const SEARCHED_ACCOUNTS = ['123', '456', '789'].map((id) => item('searched-account', id));

/** The grants of the examples: who may read or edit which item. */
const WORLD: [string, 'direct_viewer' | 'editor', string][] = [
  [ALICE, 'direct_viewer', item('account', '123')],
  [ALICE, 'editor', item('account', '456')],
  [BOB, 'direct_viewer', item('account', '123')],
  ...SEARCHED_ACCOUNTS.map((account): (typeof WORLD)[number] => [SEARCHER, 'direct_viewer', account]),
  [ALICE, 'editor', item('book', '123')],
  [ALICE, 'direct_viewer', item('todo', '1')],
  [ALICE, 'direct_viewer', item('document', 'boxcarring.md')],
  [ALICE, 'editor', item('document', 'resource-search.md')],
  [ALICE, 'direct_viewer', item('document', '1')],
  [ALICE, 'direct_viewer', item('document', '3')],
];

beforeAll(async () => {
  own = await startServiceOnOwnSpiceDB('authzen-spec', { publicUrl: PUBLIC_URL });
  ({ service } = own);
  client = own.spicedb.client;
  const relationships: Relationship[] = WORLD.map(([subject, relation, resource]) => ({
    resource: { type: 'resource', id: encodeObjectId(resource) },
    relation,
    subject: { type: 'user', id: encodeObjectId(subject) },
  }));
  await service.afterWatchDelivers(() =>
    client.writeRelationships(relationships.map((relationship) => ({ operation: 'touch', relationship }))),
  );
});

afterAll(() => own?.stop());

const subject = (id = ALICE, properties?: Record<string, unknown>) => ({
  type: 'user',
  id,
  ...(properties ? { properties } : {}),
});
const resource = (kind: string, id: string, properties?: Record<string, unknown>) => ({
  type: 'resource',
  id: item(kind, id),
  ...(properties ? { properties } : {}),
});
const canRead = { name: 'viewer' };
const REQUEST_ID = 'bfe9eb29-ab87-4ca3-be83-a1d5d8305716';

async function ask<T = Record<string, unknown>>(path: string, body: unknown): Promise<T> {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: {
      authorization: service.authorization,
      'content-type': 'application/json',
      'x-request-id': REQUEST_ID,
    },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as T;
  expect(response.status, JSON.stringify(answer)).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-request-id')).toBe(REQUEST_ID);
  return answer;
}

const evaluate = (body: unknown) => ask('/access/v1/evaluation', body);
const evaluations = (body: unknown) => ask('/access/v1/evaluations', body);

describe('the information model examples, each in an evaluation', () => {
  it('Example Subject with Additional Property; with IP Address and Device ID', async () => {
    for (const properties of [
      { department: 'Sales' },
      { ip_address: '172.217.22.14', device_id: '8:65:ee:17:7e:0b' },
    ]) {
      expect(
        await evaluate({
          subject: subject(ALICE, properties),
          resource: resource('todo', '1'),
          action: canRead,
        }),
      ).toEqual({ decision: true });
    }
  });

  it('Example Resource with Additional Property; Example Action with properties', async () => {
    const libraryRecord = { library_record: { title: 'AuthZEN in Action', isbn: '978-0593383322' } };
    expect(
      await evaluate({
        subject: subject(),
        resource: resource('book', '123', libraryRecord),
        action: { name: 'editor', properties: { period: '2W' } },
      }),
    ).toEqual({ decision: true });
  });

  it('Example Context; with a reference to a JSON schema', async () => {
    for (const context of [
      { time: '1985-10-26T01:22-07:00' },
      { time: '1985-10-26T01:22-07:00', schema: 'https://schema.example.com/access-request.schema.json' },
    ]) {
      expect(
        await evaluate({ subject: subject(), resource: resource('todo', '1'), action: canRead, context }),
      ).toEqual({ decision: true });
    }
  });
});

describe('Access Evaluation API', () => {
  it('Example Request (an action with properties)', async () => {
    const request = {
      subject: subject(),
      resource: resource('account', '123'),
      action: { ...canRead, properties: { method: 'GET' } },
      context: { time: '1985-10-26T01:22-07:00' },
    };
    expect(await evaluate(request)).toEqual({ decision: true });
    expect(await evaluate({ ...request, subject: subject(user('mallory')) })).toEqual({ decision: false });
  });

  it('Example of an HTTPS Access Evaluation Request', async () => {
    expect(
      await evaluate({
        subject: subject(),
        resource: resource('todo', '1'),
        action: canRead,
        context: { time: '1985-10-26T01:22-07:00' },
      }),
    ).toEqual({ decision: true });
  });
});

describe('Access Evaluations API', () => {
  const documents = (...ids: string[]) => ids.map((id) => ({ resource: resource('document', id) }));

  it('three requests with no default values', async () => {
    const context = { time: '2024-05-31T15:22-07:00' };
    const answer = await evaluations({
      evaluations: documents('boxcarring.md', 'subject-search.md', 'resource-search.md').map(
        (evaluation) => ({
          subject: subject(),
          action: canRead,
          ...evaluation,
          context,
        }),
      ),
    });
    expect(answer).toEqual({ evaluations: [{ decision: true }, { decision: false }, { decision: true }] });
  });

  it('three requests with a default subject and context', async () => {
    const answer = await evaluations({
      subject: subject(),
      context: { time: '2024-05-31T15:22-07:00' },
      evaluations: documents('boxcarring.md', 'subject-search.md', 'resource-search.md').map(
        (evaluation) => ({
          action: canRead,
          ...evaluation,
        }),
      ),
    });
    expect(answer).toEqual({ evaluations: [{ decision: true }, { decision: false }, { decision: true }] });
  });

  it('a default action overridden by the third request (also the HTTPS binding example)', async () => {
    const [boxcarring, subjectSearch, resourceSearch] = documents(
      'boxcarring.md',
      'subject-search.md',
      'resource-search.md',
    );
    const answer = await evaluations({
      subject: subject(),
      context: { time: '2024-05-31T15:22-07:00' },
      action: canRead,
      evaluations: [boxcarring, subjectSearch, { action: { name: 'editor' }, ...resourceSearch }],
    });
    expect(answer).toEqual({ evaluations: [{ decision: true }, { decision: false }, { decision: true }] });
  });

  it('the options example (its evaluation given the action it leaves out), unknown options ignored', async () => {
    const answer = await evaluations({
      action: canRead,
      evaluations: [{ resource: resource('document', '1'), subject: subject() }],
      options: { evaluations_semantic: 'execute_all', another_option: 'value' },
    });
    expect(answer).toEqual({ evaluations: [{ decision: true }] });
  });

  it('read on three documents under each of the three semantics', async () => {
    const semantic = (evaluationsSemantic: string) =>
      evaluations({
        subject: subject(),
        action: canRead,
        options: { evaluations_semantic: evaluationsSemantic },
        evaluations: documents('1', '2', '3'),
      });
    expect(await semantic('execute_all')).toEqual({
      evaluations: [{ decision: true }, { decision: false }, { decision: true }],
    });
    expect(await semantic('deny_on_first_deny')).toEqual({
      evaluations: [{ decision: true }, { decision: false }],
    });
    expect(await semantic('permit_on_first_permit')).toEqual({ evaluations: [{ decision: true }] });
  });
});

interface SearchAnswer<T> {
  page: { next_token: string; count: number };
  results: T[];
}
const ids = (answer: SearchAnswer<{ id: string }>) => answer.results.map((result) => result.id).sort();

describe('Search APIs', () => {
  it('the pagination examples: three accounts, two per page', async () => {
    const search = { subject: subject(SEARCHER), action: canRead, resource: { type: 'resource' } };
    const first = await ask<SearchAnswer<{ id: string }>>('/access/v1/search/resource', {
      ...search,
      page: { limit: 2 },
    });
    expect(first.page.count).toBe(2);
    expect(first.page.next_token).not.toBe('');
    const second = await ask<SearchAnswer<{ id: string }>>('/access/v1/search/resource', {
      ...search,
      page: { token: first.page.next_token },
    });
    expect(second.page).toEqual({ next_token: '', count: 1 });
    expect([...ids(first), ...ids(second)].sort()).toEqual([...SEARCHED_ACCOUNTS].sort());
  });

  it('Example Subject Search API Request (and its HTTPS binding, without context)', async () => {
    for (const context of [{ context: { time: '2024-10-26T01:22-07:00' } }, {}]) {
      const answer = await ask<SearchAnswer<{ type: string; id: string }>>('/access/v1/search/subject', {
        subject: { type: 'user' },
        action: canRead,
        resource: resource('account', '123'),
        ...context,
      });
      expect(answer.results).toEqual(expect.arrayContaining([subject(ALICE), subject(BOB)]));
      expect(answer.results).toHaveLength(2);
    }
  });

  it('Example Resource Search API Request (and its HTTPS binding)', async () => {
    const answer = await ask<SearchAnswer<{ type: string; id: string }>>('/access/v1/search/resource', {
      subject: subject(SEARCHER),
      action: canRead,
      resource: { type: 'resource' },
    });
    expect(ids(answer)).toEqual([...SEARCHED_ACCOUNTS].sort());
    expect(answer.page).toEqual({ next_token: '', count: 3 });
  });

  it('Example Action Search API Request (and its HTTPS binding)', async () => {
    const answer = await ask<SearchAnswer<{ name: string }>>('/access/v1/search/action', {
      subject: subject(),
      resource: resource('account', '456'),
      context: { time: '2024-10-26T01:22-07:00' },
    });
    expect(answer.results).toEqual([{ name: 'editor' }, { name: 'viewer' }]);
  });
});

describe('Policy Decision Point Metadata', () => {
  it('the metadata request: GET at the well-known URL of https://pdp.example.com', async () => {
    const response = await fetch(`${service.url}/.well-known/authzen-configuration`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({
      policy_decision_point: PUBLIC_URL,
      access_evaluation_endpoint: `${PUBLIC_URL}/access/v1/evaluation`,
      search_subject_endpoint: `${PUBLIC_URL}/access/v1/search/subject`,
      search_resource_endpoint: `${PUBLIC_URL}/access/v1/search/resource`,
    });
  });
});
