import { describe, expect, it } from 'vitest';
import { DECISION_CLIENT_ROLE } from '../../../../src/config/decision-clients.js';
import { MAX_REQUEST_ID_LENGTH } from '../../../../src/http/request-context.js';
import { encodeObjectId } from '../../../../src/spicedb/object-id.js';
import { SpiceDBError } from '../../../../src/spicedb/errors.js';
import { send } from '../../http/support/serve.js';
import { decisionUnderTest } from '../support/decision-app.js';
import type { DecisionUnderTest } from '../support/decision-app.js';

// The AuthZEN routes over a SpiceDB stand-in that permits alice on item 1 (and nobody else): what the routes
// accept and answer. The integration tests answer the same requests from SpiceDB.
const ALICE = encodeObjectId('alice');
const ITEM = 'urn:dx:item:1';

// The enforcement point of these tests may search every organisation (explicitly configured, as platform-wide).
const PLATFORM_SEARCH = { roles: [], platformRoles: [DECISION_CLIENT_ROLE], platformServiceAccounts: [] };

async function authzen(options: Parameters<typeof decisionUnderTest>[0] = {}) {
  const decision = await decisionUnderTest({ searchCallers: PLATFORM_SEARCH, ...options });
  decision.spicedb.answer = async (query) => ({
    allowed: query.subject.id === ALICE && query.resource.id === encodeObjectId(ITEM),
    checkedAt: 'token',
  });
  return decision;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: Record<string, unknown>;
}

async function post(
  decision: DecisionUnderTest,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${decision.url}${path}`, {
    method: 'POST',
    headers: { authorization: decision.authorization, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: JSON.parse(text) };
}

const evaluation = (subject = 'alice', item = ITEM, action = 'api') => ({
  subject: { type: 'user', id: subject },
  resource: { type: 'resource', id: item },
  action: { name: action },
});

const rawPost = (decision: DecisionUnderTest, path: string, body: unknown, headers: Record<string, string>) =>
  send(`${decision.url}${path}`, { method: 'POST', headers, body });

describe('unknown members', () => {
  it('are ignored at every level, properties of any shape included', async () => {
    const decision = await authzen();
    const anything = { department: 'Sales', nested: { list: [1, null, true] }, 'a\nkey': '"\n{}' };
    const body = {
      request_meta: { source: 'gateway' },
      subject: { ...evaluation().subject, properties: anything },
      resource: { ...evaluation().resource, properties: { library_record: { isbn: '978' } }, extra: 1 },
      action: { name: 'api', properties: { method: 'GET' }, verb: 'read' },
      context: { time: '1985-10-26T01:22-07:00' },
    };
    const answer = await post(decision, '/access/v1/evaluation', body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ decision: true });
    expect(decision.logs.text()).not.toContain('Sales');
  });

  it('are ignored in batches: options, evaluations and their parts', async () => {
    const decision = await authzen();
    const answer = await post(decision, '/access/v1/evaluations', {
      subject: { type: 'user', id: 'alice', properties: { ip_address: '172.217.22.14' } },
      action: { name: 'api', properties: { period: '2W' } },
      options: { evaluations_semantic: 'execute_all', another_option: 'value' },
      evaluations: [{ resource: { type: 'resource', id: ITEM, properties: {} }, note: 'x' }],
      batch_meta: [],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ evaluations: [{ decision: true }] });
  });

  it('are ignored in searches, page.properties and the searched id included', async () => {
    const decision = await authzen();
    const resources = await post(decision, '/access/v1/search/resource', {
      subject: { type: 'user', id: 'alice', properties: { department: 'Sales' } },
      resource: { type: 'DATABANK', id: 'ignored', properties: { shelf: 3 } },
      action: { name: 'api', properties: {} },
      page: { limit: 0, properties: { sort: 'name' }, cursor_hint: 'x' },
    });
    expect(resources.status).toBe(200);
    const subjects = await post(decision, '/access/v1/search/subject', {
      subject: { type: 'user', id: 'ignored', properties: { department: 'Sales' } },
      resource: { type: 'resource', id: ITEM },
      action: { name: 'api' },
    });
    expect(subjects.status).toBe(200);
    // AuthZEN recommends `page` first: a client reading as it arrives sees the count before the results.
    expect(resources.text).toMatch(/^\{"page":\{/);
    expect(subjects.text).toMatch(/^\{"page":\{/);
  });

  it('leave a declared member of the wrong type a 400 naming it, denied', async () => {
    const decision = await authzen();
    const answer = await post(decision, '/access/v1/evaluation', {
      ...evaluation(),
      subject: { type: 'group', id: 'g', properties: { organisation_id: 7 } },
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ decision: false });
    expect(answer.body.detail).toContain('subject.properties.organisation_id');
  });
});

describe('batches', () => {
  it('answer an evaluation outside the vocabulary as a denial with its error, and the others', async () => {
    const decision = await authzen();
    const answer = await post(decision, '/access/v1/evaluations', {
      subject: { type: 'user', id: 'alice' },
      action: { name: 'api' },
      evaluations: [
        { resource: { type: 'resource', id: ITEM } },
        { action: { name: 'fly' }, resource: { type: 'resource', id: ITEM } },
        { resource: { type: 'thing', id: ITEM } },
        { resource: { type: 'DATABANK', id: ITEM } },
      ],
    });
    expect(answer.status).toBe(200);
    const [first, fly, thing, last] = answer.body.evaluations as Record<string, unknown>[];
    expect(first).toEqual({ decision: true });
    expect(fly).toEqual({
      decision: false,
      context: {
        error: {
          status: 400,
          message: expect.stringMatching(/^evaluations\[1\]\.action\.name: relation "fly"/),
        },
      },
    });
    expect(thing).toMatchObject({ decision: false, context: { error: { status: 400 } } });
    expect(last).toEqual({ decision: true });
  });

  it('stay a 400 when malformed as a whole', async () => {
    const decision = await authzen();
    const missing = await post(decision, '/access/v1/evaluations', {
      evaluations: [{ subject: { type: 'user', id: 'alice' }, action: { name: 'api' } }],
    });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      decision: false,
      detail: expect.stringContaining('evaluations[0]'),
    });
    const notAList = await post(decision, '/access/v1/evaluations', { ...evaluation(), evaluations: {} });
    expect(notAList.status).toBe(400);
  });
});

describe('search', () => {
  it('answers results of the alias type asked for', async () => {
    const decision = await authzen();
    decision.spicedb.lookupResources = async () => ({
      resourceIds: [encodeObjectId(ITEM)],
      resultCount: 1,
      cursor: undefined,
      lookedUpAt: undefined,
    });
    const answer = await post(decision, '/access/v1/search/resource', {
      subject: { type: 'user', id: 'alice' },
      resource: { type: 'DATABANK' },
      action: { name: 'api' },
    });
    expect(answer.body).toEqual({
      page: { next_token: '', count: 1 },
      results: [{ type: 'DATABANK', id: ITEM }],
    });
  });

  it('takes page.limit 0 as the default page size and refuses a negative one', async () => {
    const decision = await authzen();
    const limits: number[] = [];
    decision.spicedb.lookupResources = async (input) => {
      limits.push(input.limit);
      return { resourceIds: [], resultCount: 0, cursor: undefined, lookedUpAt: undefined };
    };
    const search = {
      subject: { type: 'user', id: 'alice' },
      resource: { type: 'resource' },
      action: { name: 'api' },
    };
    expect(
      (await post(decision, '/access/v1/search/resource', { ...search, page: { limit: 0 } })).status,
    ).toBe(200);
    expect(limits).toEqual([1_000]);
    const negative = await post(decision, '/access/v1/search/resource', { ...search, page: { limit: -1 } });
    expect(negative.status).toBe(400);
    expect(negative.body.detail).toContain('page.limit');
  });
});

describe('X-Request-ID', () => {
  const id = 'bfe9eb29 "ab87"\t{4ca3}\u00ff';
  it('comes back exactly as sent, on every route and status', async () => {
    const decision = await authzen({ limits: { perSubject: { check: { requests: 6, windowMs: 60_000 } } } });
    const as = (authorization: string) => ({
      authorization,
      'content-type': 'application/json',
      'x-request-id': id,
    });
    const caller = as(decision.authorization);
    const statuses = [
      await rawPost(decision, '/access/v1/evaluation', evaluation(), caller),
      await rawPost(decision, '/access/v1/evaluation', { subject: {} }, caller),
      await rawPost(decision, '/access/v1/evaluations', { evaluations: [evaluation()] }, caller),
      await rawPost(decision, '/access/v1/search/action', { ...evaluation(), action: undefined }, caller),
      await rawPost(decision, '/access/v1/evaluation', evaluation(), as('Bearer not-a-token')),
    ];
    decision.spicedb.answer = () => Promise.reject(new SpiceDBError('CheckPermission', 14, 'down'));
    statuses.push(await rawPost(decision, '/access/v1/evaluation', evaluation(), caller));
    statuses.push(await rawPost(decision, '/access/v1/search/resource', evaluation(), caller));
    statuses.push(await rawPost(decision, '/access/v1/evaluation', evaluation(), caller));
    expect(statuses.map((answer) => answer.status)).toEqual([200, 400, 200, 200, 401, 503, 200, 429]);
    expect(statuses.map((answer) => answer.headers['x-request-id'])).toEqual(statuses.map(() => id));
    expect(JSON.parse(statuses[7]?.body ?? '')).toMatchObject({ decision: false });
  });

  it('is refused over its bound with a 400 naming the header, denied, and still answered back', async () => {
    const decision = await authzen();
    const long = 'r'.repeat(MAX_REQUEST_ID_LENGTH + 1);
    const headers = {
      authorization: decision.authorization,
      'content-type': 'application/json',
      'x-request-id': long,
    };
    const answer = await rawPost(decision, '/access/v1/evaluation', evaluation(), headers);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({
      decision: false,
      detail: expect.stringContaining('x-request-id'),
    });
    expect(answer.headers['x-request-id']).toBe(long);
  });
});

describe('GET /.well-known/authzen-configuration', () => {
  const getMetadata = (url: string, host: string) => send(url, { headers: { host } });

  it('names the configured public URL, never the Host a request names, at the path AuthZEN builds', async () => {
    const decision = await authzen({ publicUrl: 'https://gateway.example/decision' });
    const answer = await getMetadata(
      `${decision.url}/.well-known/authzen-configuration/decision`,
      'attacker.example',
    );
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(answer.body).not.toContain('attacker');
    expect(JSON.parse(answer.body)).toMatchObject({
      policy_decision_point: 'https://gateway.example/decision',
      access_evaluation_endpoint: 'https://gateway.example/decision/access/v1/evaluation',
    });
    // The root well-known path belongs to the identifier https://gateway.example, not to this decision point.
    expect((await getMetadata(`${decision.url}/.well-known/authzen-configuration`, 'x')).status).toBe(404);
  });

  it('is not served without a public URL: nothing is taken from the request', async () => {
    const decision = await authzen();
    const answer = await getMetadata(`${decision.url}/.well-known/authzen-configuration`, 'attacker.example');
    expect(answer.status).toBe(404);
    expect(answer.body).not.toContain('attacker');
    expect(answer.body).toContain('DECISION_PUBLIC_URL');
  });
});
