import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../../src/auth/principal.js';
import type { ActionDescription, Auditor } from '../../../../src/acl/audit/mutation-auditor.js';
import { limitRefusals } from '../../../../src/acl/audit/refusal-limit.js';
import { createLogger } from '../../../../src/observability/logger.js';
import { createMetricsRegistry } from '../../../../src/observability/metrics.js';

// Refusals (403) are recorded up to a limit per actor and window; the excess is counted by action, and
// everything else (answers, failures, other actors) is recorded as before.

const user = (id: string): Principal => ({ kind: 'user', id, roles: new Set() });
const app = (clientId: string): Principal => ({
  kind: 'application',
  id: clientId,
  clientId,
  roles: new Set(),
});
const EXPLAIN: ActionDescription[] = [
  { action: 'explain.read', target: { kind: 'item', id: 'i', itemId: 'i' } },
];
const FORBIDDEN = { status: 403, detail: 'not allowed' };

function setUp(requests = 3) {
  const recorded: string[] = [];
  const inner: Auditor = {
    ensureAvailable: () => Promise.resolve(),
    record: (principal, requestId) => {
      recorded.push(`${principal.id} ${requestId}`);
      return Promise.resolve();
    },
  };
  let clock = 1_000;
  const metricsRegistry = createMetricsRegistry();
  const auditor = limitRefusals(inner, {
    limit: { requests, windowMs: 60_000 },
    metricsRegistry,
    logger: createLogger({ level: 'silent' }),
    perf: { now: () => clock },
  });
  const unrecorded = async () =>
    (await metricsRegistry.getSingleMetric('policygrant_audit_refusals_unrecorded_total')?.get())?.values ??
    [];
  return { auditor, recorded, unrecorded, advance: (ms: number) => (clock += ms) };
}

describe('limitRefusals', () => {
  it("records an actor's first refusals of a window, counts the rest by action, and records others'", async () => {
    const { auditor, recorded, unrecorded } = setUp();
    for (let n = 0; n < 10; n++) await auditor.record(user('mallory'), `r${n}`, FORBIDDEN, EXPLAIN, false);
    await auditor.record(user('ana'), 'a', FORBIDDEN, EXPLAIN, false);
    // An application with the client id of a user's id is another actor.
    await auditor.record(app('mallory'), 'b', FORBIDDEN, EXPLAIN, false);
    expect(recorded).toEqual(['mallory r0', 'mallory r1', 'mallory r2', 'ana a', 'mallory b']);
    expect(await unrecorded()).toEqual([{ labels: { action: 'explain.read' }, value: 7 }]);
  });

  it('records every answer and every failure that is not a refusal, past the limit too', async () => {
    const { auditor, recorded } = setUp(1);
    await auditor.record(user('mallory'), 'r1', FORBIDDEN, EXPLAIN, false);
    await auditor.record(user('mallory'), 'r2', FORBIDDEN, EXPLAIN, false);
    await auditor.record(user('mallory'), 'ok', { status: 200 }, EXPLAIN, false);
    await auditor.record(user('mallory'), 'created', { status: 201 }, EXPLAIN, true);
    await auditor.record(user('mallory'), 'conflict', { status: 409 }, EXPLAIN, false);
    expect(recorded).toEqual(['mallory r1', 'mallory ok', 'mallory created', 'mallory conflict']);
  });

  it('starts a new window a window after the first refusal', async () => {
    const { auditor, recorded, advance } = setUp(1);
    await auditor.record(user('mallory'), 'r1', FORBIDDEN, EXPLAIN, false);
    advance(59_000);
    await auditor.record(user('mallory'), 'r2', FORBIDDEN, EXPLAIN, false);
    advance(1_001);
    await auditor.record(user('mallory'), 'r3', FORBIDDEN, EXPLAIN, false);
    expect(recorded).toEqual(['mallory r1', 'mallory r3']);
  });
});
