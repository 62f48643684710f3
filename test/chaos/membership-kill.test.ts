import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isMember, type Membership } from '../../src/api/v1alpha1/index.js';
import {
  MEMBERSHIP_RELATIONS,
  projectMembership,
} from '../../src/controller/memberships/membership-projection.js';
import { currentReason } from '../../src/controller/memberships/membership-status.js';
import { tupleKey, type TupleKey } from '../../src/verdict/tuple-key.js';
import type { OwnSpiceDB } from '../integration/controller/support/harness.js';
import { until } from '../../dev/wait/until.js';
import type { ControllerReplica } from './support/controller-replica.js';
import { startReplicaPair, type ReplicaPair } from './support/replica-pair.js';
import { FaultInjector, kill, type LeaseWatcher } from './support/fault-injector.js';
import { MembershipStream } from './support/membership-stream.js';
import { AclHarness } from '../integration/acl/support/acl-harness.js';
import { eventMembershipWriter, listMemberships } from './support/membership-writer.js';

// The kill test of the Membership controller: two replicas (the real entrypoint, processes of their own), the
// leader SIGKILLed again and again (and restarted) while 1,000 membership events stream in through the ACL API's
// POST /events (an ACL API in this process, a producer's credentials). Once every status is current, SpiceDB's membership tuples must be exactly the projection of
// the Membership objects. The periodic resync is 10 m away, so only the one a new leader runs hides nothing
// more than it does in production.

const STREAM_MS = Number(process.env.MEMBERSHIP_KILL_STREAM_SECONDS ?? 60) * 1000;
const STREAM = {
  changes: 1_000,
  removeEvery: 4,
  organisations: 20,
  groupsPerOrganisation: 5,
  concurrency: 4,
  durationMs: STREAM_MS,
};
const MIN_KILLS = 4;
const TIMINGS = { partitionMs: 0, restartAfterMs: 1_000, betweenMs: 4_000 };
const SETTLE_TIMEOUT_MS = 180_000;

let pair: ReplicaPair;
let spicedb: OwnSpiceDB;
let kubeConfig: KubeConfig;
let aclNamespace: string;
let replicas: ControllerReplica[] = [];
let lease: LeaseWatcher;
const acl = new AclHarness();

beforeAll(async () => {
  pair = await startReplicaPair('membership-kill');
  ({ spicedb, kubeConfig, aclNamespace, replicas, lease } = pair);
  await acl.start('membership-kill', { namespace: aclNamespace }, { kubeConfig });
}, 300_000);

afterAll(async () => {
  await acl.stop();
  await pair?.stop();
});

/** Memberships whose status does not yet say what the controller made of their current spec. */
function unsettled(memberships: readonly Membership[]): string[] {
  return memberships.flatMap((membership) => {
    const expected = isMember(membership) ? 'Projected' : 'Removed';
    const reason = currentReason(membership);
    return reason === expected ? [] : [`${membership.metadata.name}: ${reason ?? 'no current status'}`];
  });
}

async function waitForSettledStatuses(): Promise<Membership[]> {
  let pending: string[] = [];
  let memberships: Membership[] = [];
  await until(
    async () => {
      memberships = await listMemberships(kubeConfig, aclNamespace);
      pending = unsettled(memberships);
      return pending.length === 0;
    },
    () =>
      new Error(
        `timed out after ${SETTLE_TIMEOUT_MS} ms waiting for every membership status to be current; ` +
          `${pending.length} still: ${pending.slice(0, 20).join('; ')}`,
      ),
    SETTLE_TIMEOUT_MS,
    1_000,
  );
  return memberships;
}

/** Every tuple of the membership relations, read fully consistent. */
async function membershipTuples(): Promise<Set<TupleKey>> {
  const found = new Set<TupleKey>();
  for (const { objectType, relation } of MEMBERSHIP_RELATIONS) {
    const pages = spicedb.client.readRelationships(
      { resourceType: objectType, relation },
      { consistency: { fullyConsistent: true } },
    );
    for await (const page of pages)
      page.relationships.forEach((relationship) => found.add(tupleKey(relationship)));
  }
  return found;
}

const projectionOf = (memberships: readonly Membership[]): Set<TupleKey> =>
  new Set(
    memberships.filter(isMember).flatMap((membership) => projectMembership(membership.spec).map(tupleKey)),
  );

describe('the Membership controller killed again and again', () => {
  it('leaves SpiceDB holding exactly the projection of the Membership objects', async () => {
    const producer = await acl.user({ roles: ['platform_event_producer'] });
    const stream = new MembershipStream(eventMembershipWriter(acl.api.url, producer.authorization), STREAM);
    const injector = new FaultInjector(replicas, lease, TIMINGS, [kill]);
    await injector.leader();

    const started = Date.now();
    let streaming = true;
    await Promise.all([
      stream.run().finally(() => (streaming = false)),
      injector.run((done) => streaming || done < MIN_KILLS),
    ]);
    const streamSeconds = Math.round((Date.now() - started) / 1000);
    await injector.leader();
    const memberships = await waitForSettledStatuses();
    const settledSeconds = Math.round((Date.now() - started) / 1000);

    const wanted = projectionOf(memberships);
    const actual = await membershipTuples();
    const missing = [...wanted].filter((key) => !actual.has(key));
    const orphan = [...actual].filter((key) => !wanted.has(key));
    console.log(
      [
        `[membership-kill] ${streamSeconds} s of changes: ${JSON.stringify(stream.counts)}; settled after ${settledSeconds} s`,
        `[membership-kill] ${injector.records.length} kills, ${lease.failovers} failovers observed`,
        `[membership-kill] ${memberships.length} memberships, ${wanted.size} tuples wanted, ${actual.size} in SpiceDB: ` +
          `${missing.length} missing, ${orphan.length} orphan`,
      ].join('\n'),
    );

    expect(stream.counts.added + stream.counts.removed).toBe(STREAM.changes);
    expect(injector.records.length).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(lease.failovers).toBeGreaterThanOrEqual(MIN_KILLS);
    expect(wanted.size).toBeGreaterThan(0);
    expect({ missing, orphan }).toEqual({ missing: [], orphan: [] });
  });
});
