import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { sampleItemPartiesForFile } from '../../e2e/support/stack-client.js';
import {
  decisionReplicas,
  everyReplica,
  grant,
  p50p99,
  replicaAllows,
  revoke,
  type Replica,
} from '../support/production-topology.js';

// Freshness on the production topology, through each decision replica at its own address (not the Service,
// which would hide a stale replica behind a fresh one): after a change the ACL API acknowledged (`Prefer: wait`,
// `enforced: true`) every replica decides by it; without a token, how long each replica takes to see a change.

/** Acknowledged grants and revocations; each revocation is checked on every replica. */
const ROUNDS = 100;
/** Changes timed per direction without a token. */
const TIMED_CHANGES = 100;
/** A round is two acknowledged writes and two checks per replica: seconds at most on a loaded node. */
const ROUND_BUDGET_MS = 10_000;

const parties = sampleItemPartiesForFile();
let replicas: Replica[];

beforeAll(async () => {
  replicas = await decisionReplicas();
});

const count = (decisions: (boolean | undefined)[], value: boolean | undefined) =>
  decisions.filter((decision) => decision === value).length;

/** Milliseconds from `since` until the replica decides `allowed` (polling, one check after another). */
async function untilDecides(replica: Replica, userId: string, allowed: boolean, since: number) {
  for (;;) {
    if ((await replicaAllows(replica, parties.checker, userId, parties.item.itemId)) === allowed)
      return performance.now() - since;
    if (performance.now() - since > POLL_TIMEOUT_MS)
      throw new Error(`${replica.pod} never decided ${allowed}`);
  }
}

describe('freshness through every decision replica', () => {
  it(
    'every replica allows an acknowledged grant, and none allows after an acknowledged revocation',
    { timeout: ROUNDS * ROUND_BUDGET_MS },
    async () => {
      expect(replicas.map((replica) => replica.pod)).toHaveLength(3);
      const tally = { grantDenied: 0, revokedAllowed: 0, unanswered: 0, notAcknowledged: 0 };
      const acknowledgedMs = { grant: [] as number[], revoke: [] as number[] };
      const confirmedBy = new Map<string, number>();
      for (let round = 0; round < ROUNDS; round++) {
        const consumer = randomUUID();
        let started = performance.now();
        const granted = await grant(parties.owner, parties.item, consumer, true);
        acknowledgedMs.grant.push(performance.now() - started);
        const afterGrant = await everyReplica(replicas, parties.checker, consumer, parties.item.itemId);
        started = performance.now();
        const revoked = await revoke(parties.owner, granted.policyId, true);
        acknowledgedMs.revoke.push(performance.now() - started);
        const afterRevoke = await everyReplica(replicas, parties.checker, consumer, parties.item.itemId);
        tally.notAcknowledged += Number(granted.enforced !== true) + Number(revoked.enforced !== true);
        for (const { decisionReplicas } of [granted, revoked]) {
          const key = decisionReplicas ? `${decisionReplicas.passed} of ${decisionReplicas.ready}` : 'none';
          confirmedBy.set(key, (confirmedBy.get(key) ?? 0) + 1);
        }
        tally.grantDenied += count(afterGrant, false);
        tally.revokedAllowed += count(afterRevoke, true);
        tally.unanswered += count(afterGrant, undefined) + count(afterRevoke, undefined);
        // An unacknowledged change waited out its whole `Prefer: wait`: the rounds after it would only do the same.
        if (tally.notAcknowledged > 0) break;
      }
      console.log(
        `[production] ${ROUNDS} acknowledged grants and revocations, each checked at once on ${replicas.length} replicas: ` +
          `${JSON.stringify(tally)}; Prefer: wait answered a grant in ${p50p99(acknowledgedMs.grant)}, ` +
          `a revocation in ${p50p99(acknowledgedMs.revoke)}; decision replicas that confirmed each answer: ` +
          JSON.stringify(Object.fromEntries(confirmedBy)),
      );
      expect(tally).toEqual({ grantDenied: 0, revokedAllowed: 0, unanswered: 0, notAcknowledged: 0 });
    },
  );

  it(
    'without a token: how long after the answer each replica allows a grant and denies a revocation',
    { timeout: TIMED_CHANGES * ROUND_BUDGET_MS },
    async () => {
      const toAllow = new Map(replicas.map((replica) => [replica.pod, [] as number[]]));
      const toDeny = new Map(replicas.map((replica) => [replica.pod, [] as number[]]));
      const timeEveryReplica = async (
        userId: string,
        allowed: boolean,
        since: number,
        into: typeof toAllow,
      ) => {
        const times = await Promise.all(
          replicas.map((replica) => untilDecides(replica, userId, allowed, since)),
        );
        replicas.forEach((replica, index) => into.get(replica.pod)?.push(times[index] as number));
      };
      for (let change = 0; change < TIMED_CHANGES; change++) {
        // Timed from the answer, as a client that goes on once its write is answered.
        const consumer = randomUUID();
        const { policyId } = await grant(parties.owner, parties.item, consumer, false);
        await timeEveryReplica(consumer, true, performance.now(), toAllow);
        await revoke(parties.owner, policyId, false);
        await timeEveryReplica(consumer, false, performance.now(), toDeny);
      }
      for (const replica of replicas) {
        console.log(
          `[production] ${replica.pod}, no token, ${TIMED_CHANGES} changes: POST /policy answered → allows ` +
            `${p50p99(toAllow.get(replica.pod) ?? [])}; DELETE /policy answered → denies ${p50p99(toDeny.get(replica.pod) ?? [])}`,
        );
      }
      expect([...toAllow.values(), ...toDeny.values()].every((times) => times.length === TIMED_CHANGES)).toBe(
        true,
      );
    },
  );
});
