import { randomUUID } from 'node:crypto';
import pLimit from 'p-limit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AclHarness, group, individual, type Caller } from './support/acl-harness.js';

// A few thousand random and mutated requests (bodies, query strings, headers, media types) against every
// route, the membership, delegation and access-request routes included: none may be answered with a 5xx, and every answer is a JSON envelope. Seeded, bounded in count; the test's timeout
// bounds its time, sized for a loaded machine: how fast the answers come is the benchmarks' business.

const REQUESTS = 3_000;
const CONCURRENCY = 12;
const FUZZ_TIMEOUT_MS = 4 * 60_000;

const harness = new AclHarness();
let callers: Caller[];
let itemId: string;
let orgId: string;
/** Requests that exist, for the PATCH and GET of one (random If-Match headers and bodies). */
const accessRequestIds: string[] = [];

beforeAll(async () => {
  await harness.start('acl-fuzz');
  orgId = randomUUID();
  const owner = await harness.user({ org: orgId });
  callers = [
    owner,
    await harness.user({ roles: ['org_admin', 'cos_admin'], org: orgId }),
    await harness.user(),
    harness.basicCaller(),
    await harness.user({ roles: ['event_producer'] }),
  ];
  itemId = (await harness.catalogItem({ ownerId: owner.id, organisationId: orgId })).spec.itemId;
  for (const accessType of ['api', 'file', 'sub']) {
    const asked = await harness.request<{ results: { requestId: string }[] }>('POST', '/access-requests', {
      caller: callers[2],
      body: { ...(validAccessRequest() as object), access: [{ accessType }] },
    });
    expect(asked.status).toBe(201);
    accessRequestIds.push(asked.body.results[0]?.requestId ?? '');
  }
});

afterAll(() => harness.stop());

/** mulberry32: a small seeded generator, so a failure can be replayed with its seed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  return { next, int, pick };
}
type Random = ReturnType<typeof generator>;

const ODD_STRINGS = [
  '',
  ' ',
  'null',
  '0',
  '-1',
  '1e999',
  'NaN',
  '__proto__',
  'constructor',
  '../../etc/passwd',
  '%00',
  '\u0000',
  '\ud800',
  '😀'.repeat(50),
  'a'.repeat(5_000),
  '<script>',
  "' OR 1=1 --",
  'ACTIVE',
  'DELETED',
  'INDIVIDUAL',
  'GROUP',
  'api',
  '2020-01-01T00:00:00Z',
  '2999-12-31T23:59:59+02:00',
  randomUUID(),
  randomUUID().toUpperCase(),
];

function randomValue(random: Random, depth = 0): unknown {
  switch (random.int(depth > 3 ? 6 : 9)) {
    case 0:
      return null;
    case 1:
      return random.next() < 0.5;
    case 2:
      return random.pick([0, -1, 1.5, 1e308, -0, Number.MAX_SAFE_INTEGER + 2, 1000, 1001]);
    case 3:
    case 4:
      return random.pick(ODD_STRINGS);
    case 5:
      return randomUUID();
    case 6:
      return Array.from({ length: random.int(4) }, () => randomValue(random, depth + 1));
    default: {
      const keys = [
        ...['request', 'user', 'item', 'id', 'itemId', 'policyType', 'constraints', '__proto__', 'x'],
        ...['specversion', 'type', 'time', 'data', 'userIds', 'organisationId', 'groupId'],
        ...['agentId', 'relation', 'expiryTime'],
      ];
      return Object.fromEntries(
        Array.from({ length: random.int(5) }, () => [random.pick(keys), randomValue(random, depth + 1)]),
      );
    }
  }
}

/** Replaces, deletes or adds one field somewhere in a valid document. */
function mutate(random: Random, document: unknown): unknown {
  const copy = structuredClone(document) as Record<string, unknown>;
  const containers: Record<string, unknown>[] = [];
  const walk = (value: unknown) => {
    if (typeof value === 'object' && value !== null) {
      containers.push(value as Record<string, unknown>);
      Object.values(value).forEach(walk);
    }
  };
  walk(copy);
  for (let round = 0; round <= random.int(3); round++) {
    const target = random.pick(containers);
    const keys = Object.keys(target);
    const key =
      keys.length > 0 && random.next() < 0.8 ? random.pick(keys) : random.pick(['extra', '0', 'userId']);
    if (random.next() < 0.3) Reflect.deleteProperty(target, key);
    else target[key] = randomValue(random);
  }
  return copy;
}

function validCreate(random: Random): unknown {
  const items = Array.from({ length: 1 + random.int(3) }, () =>
    random.next() < 0.5 ? individual(itemId, randomUUID(), ['api', 'file']) : group(itemId, [randomUUID()]),
  );
  return { request: items };
}

const EVENT_TYPES = ['org.member.added', 'org.member.removed', 'group.member.added', 'group.member.removed'];

function validEvent(random: Random): Record<string, unknown> {
  const type = random.pick(EVENT_TYPES);
  const data = { organisationId: orgId, userId: randomUUID() };
  return {
    specversion: '1.0',
    id: random.pick(['e-1', randomUUID()]),
    source: '//fuzz',
    time: new Date(Date.now() - random.int(3_600_000)).toISOString(),
    type,
    data: type.startsWith('group.') ? { ...data, groupId: random.pick(['g', 'team.a']) } : data,
  };
}

function validEvents(random: Random): unknown {
  return random.next() < 0.3
    ? validEvent(random)
    : Array.from({ length: random.int(4) }, () => validEvent(random));
}

function validDelegation(random: Random): unknown {
  return {
    agentId: random.pick(['agent-1', `urn:dx:agent:${randomUUID()}`]),
    itemId,
    relation: random.pick(['viewer', 'editor', 'querier']),
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
  };
}

function validAccessRequest(): unknown {
  return {
    itemId,
    itemType: 'DATABANK',
    access: [{ accessType: 'api' }],
    expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
    purpose: 'fuzz',
  };
}

function validDecision(random: Random): unknown {
  const status = random.pick(['APPROVED', 'REJECTED', 'WITHDRAWN']);
  return status === 'APPROVED' && random.next() < 0.5
    ? { status, expiryTime: new Date(Date.now() + 3_600_000).toISOString() }
    : { status, reason: 'fuzz' };
}

/** Header values must be printable ASCII, or fetch refuses to send them. */
const IF_MATCH = ['"1"', '*', 'W/"1"', 'garbage', '"1", "2"', '""', '"', ...ODD_STRINGS.map(String)].filter(
  (value) => /^[\x20-\x7e]*$/.test(value),
);

interface FuzzRequest {
  method: string;
  path: string;
  body?: string;
  headers: Record<string, string>;
}

/** A lone surrogate cannot be percent-encoded: send the bytes of one instead (not valid UTF-8 either). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

function randomQuery(random: Random): string {
  const names = ['status', 'limit', 'offset', 'id', 'x', 'limit[]', 'status[0]'];
  const parts = Array.from({ length: random.int(4) }, () => {
    const value = String(
      random.next() < 0.5 ? random.pick(ODD_STRINGS) : random.pick(['1', '50', '1000', '0']),
    );
    return `${encode(random.pick(names))}=${random.next() < 0.1 ? value : encode(value)}`;
  });
  return parts.length > 0 ? `?${parts.join('&')}` : '';
}

function randomRequest(random: Random): FuzzRequest {
  const caller = random.next() < 0.05 ? undefined : random.pick(callers);
  const headers: Record<string, string> = caller ? { authorization: caller.authorization } : {};
  const kind = random.int(13);
  const jsonBody = (value: unknown) => {
    headers['content-type'] =
      random.next() < 0.05
        ? random.pick(['text/plain', 'application/xml', 'application/json; charset=latin1'])
        : 'application/json';
    return random.next() < 0.05 ? JSON.stringify(value).slice(0, random.int(40)) : JSON.stringify(value);
  };
  if (kind <= 1) {
    if (random.next() < 0.3)
      headers['idempotency-key'] = random.pick(['k', 'same-key', 'ü', ' ', 'x'.repeat(256)]);
    const body =
      random.next() < 0.6
        ? mutate(random, validCreate(random))
        : random.next() < 0.5
          ? validCreate(random)
          : randomValue(random);
    return {
      method: 'POST',
      path: `/policy${random.next() < 0.1 ? randomQuery(random) : ''}`,
      body: jsonBody(body),
      headers,
    };
  }
  if (kind === 2) {
    const valid = { user: { id: random.pick(callers).id }, item: { itemId } };
    const body = random.next() < 0.7 ? mutate(random, valid) : randomValue(random);
    return { method: 'POST', path: '/verify', body: jsonBody(body), headers };
  }
  if (kind === 3) {
    const id = random.next() < 0.5 ? randomUUID() : String(random.pick(ODD_STRINGS));
    return {
      method: 'DELETE',
      path: `/policy?id=${encode(id)}${random.next() < 0.2 ? '&' + randomQuery(random).slice(1) : ''}`,
      headers,
    };
  }
  if (kind === 6) {
    const valid = validEvents(random);
    const body =
      random.next() < 0.6 ? mutate(random, valid) : random.next() < 0.5 ? valid : randomValue(random);
    const text = JSON.stringify(body);
    headers['content-type'] = random.pick([
      'application/cloudevents+json',
      'application/cloudevents-batch+json',
      'application/cloudevents-batch+json; charset=utf-8',
      'application/json',
      'text/plain',
    ]);
    return {
      method: 'POST',
      path: '/events',
      body: random.next() < 0.05 ? text.slice(0, 30) : text,
      headers,
    };
  }
  if (kind === 7 || kind === 8) {
    const organisation = random.next() < 0.8 ? orgId : String(random.pick(ODD_STRINGS));
    const group = random.next() < 0.5 ? '' : `/groups/${encode(String(random.pick(['g', ...ODD_STRINGS])))}`;
    const path = `/organisations/${encode(organisation)}${group}/members`;
    if (kind === 8) return { method: 'GET', path: `${path}${randomQuery(random)}`, headers };
    const valid = { userIds: Array.from({ length: random.int(4) }, () => randomUUID()) };
    const body =
      random.next() < 0.6 ? mutate(random, valid) : random.next() < 0.5 ? valid : randomValue(random);
    return { method: 'PUT', path, body: jsonBody(body), headers };
  }
  if (kind === 9) {
    const body = random.next() < 0.7 ? mutate(random, validDelegation(random)) : randomValue(random);
    return { method: 'POST', path: '/delegations', body: jsonBody(body), headers };
  }
  if (kind === 10) {
    const id = random.next() < 0.5 ? randomUUID() : String(random.pick(ODD_STRINGS));
    if (random.next() < 0.3) return { method: 'GET', path: `/delegations${randomQuery(random)}`, headers };
    return { method: random.pick(['GET', 'DELETE']), path: `/delegations/${encode(id)}`, headers };
  }
  if (kind === 11) {
    if (random.next() < 0.3) {
      const listing = random.pick(['consumer', 'provider']);
      return { method: 'GET', path: `/access-requests/${listing}${randomQuery(random)}`, headers };
    }
    const body = random.next() < 0.7 ? mutate(random, validAccessRequest()) : randomValue(random);
    return { method: 'POST', path: '/access-requests', body: jsonBody(body), headers };
  }
  if (kind === 12) {
    const known = random.next() < 0.7;
    const id = known ? random.pick(accessRequestIds) : String(random.pick([randomUUID(), ...ODD_STRINGS]));
    if (random.next() < 0.3) return { method: 'GET', path: `/access-requests/${encode(id)}`, headers };
    if (random.next() < 0.8) headers['if-match'] = random.pick(IF_MATCH);
    const body = random.next() < 0.7 ? mutate(random, validDecision(random)) : randomValue(random);
    return { method: 'PATCH', path: `/access-requests/${encode(id)}`, body: jsonBody(body), headers };
  }
  const listing = random.pick(['consumer', 'provider', 'organisation', 'platform']);
  const method = random.next() < 0.05 ? random.pick(['PUT', 'PATCH', 'POST', 'HEAD', 'OPTIONS']) : 'GET';
  return { method, path: `/policy/${listing}${randomQuery(random)}`, headers };
}

describe('fuzz', () => {
  it(
    `${REQUESTS} random and mutated requests: no 5xx, every error a JSON envelope`,
    async () => {
      const seed = Number(process.env.ACL_FUZZ_SEED ?? Date.now() % 1_000_000);
      const random = generator(seed);
      const requests = Array.from({ length: REQUESTS }, () => randomRequest(random));
      const failures: string[] = [];
      const statuses = new Map<number, number>();
      const succeeded = new Set<string>();
      await pLimit(CONCURRENCY).map(requests, async (request) => {
        const response = await fetch(`${harness.api.url}${request.path}`, {
          method: request.method,
          headers: request.headers,
          ...(request.body === undefined ? {} : { body: request.body }),
        });
        const text = await response.text();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status < 300) succeeded.add(`${request.method} ${request.path.split(/[/?]/)[1]}`);
        const label = `${request.method} ${request.path.slice(0, 120)} ${String(request.body).slice(0, 200)}`;
        if (response.status >= 500) failures.push(`${response.status} ${label}: ${text.slice(0, 300)}`);
        if (response.status >= 400 && request.method !== 'HEAD' && !/"type":"urn:dx:acl:\w+"/.test(text)) {
          failures.push(`${response.status} without a problem body: ${label}`);
        }
      });
      expect(failures, `seed ${seed}`).toEqual([]);
      expect([...statuses.values()].reduce((sum, count) => sum + count, 0)).toBe(REQUESTS);
      // The fuzz reached past validation: some creates and listings succeeded.
      expect(statuses.get(201) ?? 0).toBeGreaterThan(0);
      expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
      expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
      expect(statuses.get(415) ?? 0).toBeGreaterThan(0);
      expect([...succeeded]).toEqual(
        expect.arrayContaining(['POST events', 'PUT organisations', 'GET organisations']),
      );
    },
    FUZZ_TIMEOUT_MS,
  );
});
