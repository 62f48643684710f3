import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
import { until } from '../../../dev/wait/until.js';
import { HOOK_TIMEOUT_MS } from '../../support/timeouts.js';
import { signToken, testKey } from '../../unit/auth/support/tokens.js';
import type { TestKey } from '../../unit/auth/support/tokens.js';
import { testSpiceDB, uniqueId } from '../support/cluster.js';
import { startDecisionReplica } from './support/decision-replica.js';
import type { DecisionReplica } from './support/decision-replica.js';
import { EndpointsProxy } from './support/endpoints-proxy.js';
import { sleep } from '../../../dev/wait/sleep.js';

// A rolling update of the fail-closed decision service (maxSurge 1, maxUnavailable 0) under a stream of
// checks: each old replica is replaced by a new one, started first, then sent SIGTERM. With the drain, the old
// replica fails readiness at once and keeps serving until the proxy has taken it out of rotation.
const DRAIN_SECONDS = 5;
const CALLERS = 4;
/** A pause between one caller's checks: a steady stream, not a flood of the shared machine. */
const CALLER_PAUSE_MS = 20;
/** The stream's bound, whatever happens: it stops at stop() or after this many checks. */
const MOST_CHECKS = 20_000;

interface Outcome {
  expected: boolean;
  status?: number;
  allowed?: boolean;
  error?: string;
}

const failed = (outcome: Outcome) => outcome.status !== 200 || outcome.allowed !== outcome.expected;

/** Callers checking, through the proxy, one user who holds the grant and one who does not, in turn. */
class CheckStream {
  readonly outcomes: Outcome[] = [];
  private stopped = false;
  private callers: Promise<void>[] = [];

  constructor(
    private readonly url: string,
    private readonly authorization: string,
    /** The check bodies: of the user who holds the grant, and of one who does not. */
    private readonly holder: string,
    private readonly stranger: string,
  ) {}

  start(): void {
    this.callers = Array.from({ length: CALLERS }, () => this.call());
  }

  async stop(): Promise<Outcome[]> {
    this.stopped = true;
    await Promise.all(this.callers);
    return this.outcomes;
  }

  private async call(): Promise<void> {
    while (!this.stopped && this.outcomes.length < MOST_CHECKS) {
      const expected = this.outcomes.length % 2 === 0;
      this.outcomes.push(await this.check(expected ? this.holder : this.stranger, expected));
      await sleep(CALLER_PAUSE_MS);
    }
  }

  private async check(body: string, expected: boolean): Promise<Outcome> {
    try {
      const response = await fetch(`${this.url}/v1/check`, {
        method: 'POST',
        headers: { authorization: this.authorization, 'content-type': 'application/json' },
        body,
      });
      const answer = (await response.json()) as { result?: { allowed?: boolean } };
      return {
        expected,
        status: response.status,
        ...(answer.result ? { allowed: answer.result.allowed } : {}),
      };
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return { expected, error: cause?.code ?? cause?.message ?? String(error) };
    }
  }
}

let stateDir: string;
let spicedb: SpiceDBClient;
let key: TestKey;
let proxy: EndpointsProxy;
const replicas: DecisionReplica[] = [];

async function addReplica(name: string): Promise<DecisionReplica> {
  const replica = await startDecisionReplica({
    name,
    stateDir,
    spicedb: testSpiceDB(),
    key,
    drainSeconds: DRAIN_SECONDS,
  });
  replicas.push(replica);
  proxy.add(replica.port);
  await until(() => proxy.isReady(replica.port), `${name} to join the rotation`);
  return replica;
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'decision-rollout-'));
  spicedb = new SpiceDBClient({ ...testSpiceDB(), transport: 'plaintext' });
  key = await testKey('ES256', 'rollout');
  proxy = await EndpointsProxy.start();
  await Promise.all([addReplica('decision-old-1'), addReplica('decision-old-2')]);
}, HOOK_TIMEOUT_MS * 2);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.process.kill()));
  await proxy?.close();
  spicedb?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

async function grantedItem(userId: string): Promise<{ itemId: string; zedToken: string }> {
  const itemId = `urn:dx:item:${uniqueId('rollout')}`;
  const zedToken = await spicedb.writeRelationships([
    {
      operation: 'touch',
      relationship: {
        resource: { type: 'resource', id: encodeObjectId(itemId) },
        relation: 'api_consumer',
        subject: { type: 'user', id: userId },
        expiresAt: new Date(Date.now() + 3_600_000),
      },
    },
  ]);
  return { itemId, zedToken };
}

describe('a rolling update of the decision service', () => {
  it('answers every check of a stream with its verdict while each replica is replaced', async () => {
    const [holder, stranger] = [uniqueId('user'), uniqueId('user')];
    const { itemId, zedToken } = await grantedItem(holder);
    const checkOf = (userId: string) =>
      JSON.stringify({
        subject_type: 'user',
        subject_id: userId,
        resource_type: 'resource',
        resource_id: itemId,
        relation: 'api',
        consistency_token: zedToken,
      });
    const authorization = `Bearer ${await signToken(key, { roles: [DECISION_CLIENT_ROLE] }, { expiresIn: 3_600 })}`;
    const stream = new CheckStream(proxy.url, authorization, checkOf(holder), checkOf(stranger));
    const answeredAtLeast = (count: number) =>
      until(() => stream.outcomes.length >= count, `${count} checks`);

    stream.start();
    await answeredAtLeast(20);
    const old = [...replicas];
    for (const [index, replica] of old.entries()) {
      await addReplica(`decision-new-${index + 1}`);
      await replica.process.stop(60_000);
      expect(await replica.process.exited).toBe(0);
    }
    await answeredAtLeast(stream.outcomes.length + 20);
    const outcomes = await stream.stop();

    expect(outcomes.filter(failed)).toEqual([]);
    expect(outcomes.length).toBeLessThan(MOST_CHECKS);
  }, 600_000);
});
