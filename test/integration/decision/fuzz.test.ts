import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testSpiceDB, uniqueId } from '../support/cluster.js';
import { startServiceUnderTest, untilReady } from './support/decision-service.js';
import type { DecisionServiceUnderTest } from './support/decision-service.js';

// Random and mutated bodies against the running service and the shared SpiceDB (which is up): every answer
// is a decision or a 4xx, and no random subject is ever allowed. FUZZ_SEED=<n> replays a run.
const SEED = Number(process.env.FUZZ_SEED ?? randomInt(2 ** 31));
const BODIES = 3_000;
const IN_FLIGHT = 16;

let service: DecisionServiceUnderTest;

beforeAll(async () => {
  service = await startServiceUnderTest({ spicedb: testSpiceDB() });
  await untilReady(service);
});

afterAll(async () => {
  await service?.stop();
});

/** mulberry32: small, seedable, good enough to pick mutations. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = [
  'subject_type',
  'subject_id',
  'organisation_id',
  'resource_type',
  'resource_id',
  'relation',
  'consistency_token',
];
const WORDS = [
  'user',
  'group',
  'agent',
  'resource',
  'DATABANK',
  'viewer',
  'editor',
  'owner',
  'api',
  'file',
  'sub',
  'api_consumer',
  'direct_viewer',
  'member',
  '__proto__',
  'constructor',
  'toString',
  '',
  ' ',
  '*',
  'user#member',
  'resource:x',
];
const ALPHABETS = [
  'abcXYZ019-_/',
  ':=|+*#@!% ?.,;&',
  '\u0000\u0007\n\t\u007f',
  'éßø漢字🙂',
  '\ud800\udc00\ud800',
  'Gh8KEzE3OTUz=+/',
];

function fuzzer(next: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const text = (maxLength: number): string => {
    const alphabet = [...pick(ALPHABETS)];
    return Array.from({ length: Math.floor(next() * maxLength) }, () => pick(alphabet)).join('');
  };
  const value = (): unknown =>
    pick([
      () => pick(WORDS),
      () => text(40),
      () => text(1_500),
      () => Math.floor(next() * 1e6) - 5e5,
      () => next() < 0.5,
      () => null,
      () => [pick(WORDS)],
      () => ({ id: pick(WORDS) }),
    ])();

  const template = (): Record<string, unknown> => ({
    subject_type: 'user',
    subject_id: uniqueId('fuzz-subject'),
    organisation_id: '',
    resource_type: 'resource',
    resource_id: `urn:dx:item:${uniqueId('fuzz')}`,
    relation: 'api',
  });
  // defineProperty, so that `__proto__` becomes a key of the JSON rather than the object's prototype.
  const set = (body: Record<string, unknown>, key: string, to: unknown) =>
    Object.defineProperty(body, key, { value: to, enumerable: true, writable: true, configurable: true });
  const mutations: Array<(body: Record<string, unknown>) => void> = [
    (body) => Reflect.deleteProperty(body, pick(FIELDS)),
    (body) => set(body, pick(FIELDS), value()),
    (body) => set(body, pick(FIELDS), pick(WORDS)),
    (body) => set(body, pick(['extra', 'organization_id', 'allowed', '__proto__']), value()),
    (body) =>
      Object.assign(body, { subject_type: 'group', organisation_id: next() < 0.8 ? uniqueId('org') : '' }),
    (body) => set(body, 'consistency_token', text(60)),
    (body) => set(body, 'subject_id', text(20) || 'x'),
    (body) => set(body, 'resource_id', text(20) || 'x'),
  ];
  return (): string => {
    const shape = next();
    if (shape < 0.05) return JSON.stringify(value());
    if (shape < 0.1) return JSON.stringify(template()).slice(0, Math.floor(next() * 100));
    const body = template();
    for (let count = 1 + Math.floor(next() * 3); count > 0; count--) pick(mutations)(body);
    return JSON.stringify(body);
  };
}

describe('fuzzing POST /v1/check', () => {
  it(`answers ${BODIES} random bodies with a decision or a 4xx, never an allow (seed ${SEED})`, async () => {
    const nextBody = fuzzer(random(SEED));
    const bodies = Array.from({ length: BODIES }, nextBody);
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    const send = async (body: string) => {
      const { status, body: answer } = await service.check(body);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      const allowed = answer.result?.allowed;
      if (status >= 500 || typeof allowed !== 'boolean' || allowed || (status !== 200 && status < 400)) {
        problems.push(`${status} ${JSON.stringify(answer).slice(0, 200)} for ${body.slice(0, 200)}`);
      }
    };
    for (let start = 0; start < bodies.length; start += IN_FLIGHT) {
      await Promise.all(bodies.slice(start, start + IN_FLIGHT).map(send));
    }
    expect(problems, `seed ${SEED}`).toEqual([]);
    // The fuzzer reaches both sides: evaluated checks and rejected inputs.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(BODIES / 20);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(BODIES / 4);
    expect(await service.metrics.metrics()).toMatch(/policygrant_decisions_total\{result="error"\} 0\n/);
  });
});
