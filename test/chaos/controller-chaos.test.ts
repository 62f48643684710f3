import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnforcedReason, type PolicyGrant } from '../../src/api/v1alpha1/index.js';
import { sleep } from '../../dev/wait/sleep.js';
import { loadRegistry } from '../../src/spicedb/registry.js';
import {
  enforcedCondition,
  type OwnSpiceDB,
  type Resources,
} from '../integration/controller/support/harness.js';
import { until } from '../../dev/wait/until.js';
import type { ControllerReplica } from './support/controller-replica.js';
import { startReplicaPair, type ReplicaPair } from './support/replica-pair.js';
import { accountForTuple } from './support/drift-account.js';
import {
  describeFault,
  FAULT_PLAN,
  FaultInjector,
  type FaultRecord,
  type LeaseWatcher,
} from './support/fault-injector.js';
import { GrantChurn } from './support/grant-churn.js';
import { compareTuples, effectiveProjection, managedTuples } from './support/projection-drift.js';
import { listGrants, listItems } from './support/cluster-objects.js';
import { RevocationChecker } from './support/revocation-checker.js';

// Two controller replicas (the real entrypoint, processes of their own) behind pausable proxies to the
// kube-apiserver and to a SpiceDB of the test's own. Grants churn while the leader is killed or partitioned
// again and again. Throughout, no grant whose withdrawal the controller acknowledged may check true; at the
// end, once every status is current, SpiceDB must hold exactly the projection of the grants: no resync is run
// first, and the replicas' periodic resync is far away (10 m), so nothing hides drift.

const CHURN_MS = Number(process.env.CHAOS_CHURN_SECONDS ?? 150) * 1000;
const LEASE_DURATION_MS = 4_000;
const ITEMS = 6;
const SEED_GRANTS = 40;
const LIMITS = { maxCreated: 150, maxActive: 80 };
const CHURN_WORKERS = 2;
const CHURN_INTERVAL_MS = 400;
const CHECK_INTERVAL_MS = 1_000;
const SETTLE_TIMEOUT_MS = 180_000;
const TIMINGS = { partitionMs: LEASE_DURATION_MS + 4_000, restartAfterMs: 1_000, betweenMs: 3_000 };

const registry = loadRegistry();
let pair: ReplicaPair;
let spicedb: OwnSpiceDB;
let kubeConfig: KubeConfig;
let resources: Resources;
let aclNamespace: string;
let replicas: ControllerReplica[] = [];
let lease: LeaseWatcher;
let itemIds: string[];

beforeAll(async () => {
  pair = await startReplicaPair('chaos');
  ({ spicedb, kubeConfig, resources, aclNamespace, replicas, lease } = pair);
  itemIds = [];
  for (let i = 0; i < ITEMS; i += 1) itemIds.push((await resources.createItem()).spec.itemId);
}, 300_000);

afterAll(async () => {
  await pair?.stop();
});

/** Grants whose status does not yet say what the controller made of their current spec, and why. */
function unsettled(grants: readonly PolicyGrant[]): string[] {
  return grants.flatMap((grant) => {
    const condition = enforcedCondition(grant);
    const { name, generation, deletionTimestamp } = grant.metadata;
    if (deletionTimestamp) return [`${name}: being deleted`];
    if (!condition || condition.observedGeneration !== generation) {
      return [`${name}: generation ${generation}, Enforced for ${condition?.observedGeneration}`];
    }
    return condition.reason === EnforcedReason.ProjectionFailed ? [`${name}: ProjectionFailed`] : [];
  });
}

async function waitForSettledStatuses(): Promise<void> {
  let pending: string[] = [];
  await until(
    async () => {
      pending = unsettled(await listGrants(kubeConfig, aclNamespace));
      return pending.length === 0;
    },
    () =>
      new Error(
        `timed out after ${SETTLE_TIMEOUT_MS} ms waiting for every grant status to be current; ` +
          `still: ${pending.slice(0, 20).join('; ')}`,
      ),
    SETTLE_TIMEOUT_MS,
    1_000,
  );
}

/** Faults and changes of leader, in the order they happened. */
function timeline(
  faults: readonly FaultRecord[],
  holders: readonly { at: Date; holder: string }[],
): string[] {
  const replicaOf = (identity: string) =>
    replicas.find((replica) => replica.identities.includes(identity))?.name ?? identity;
  return [
    ...faults.map(({ at, replica, fault }) => ({ at, text: `${replica}: ${describeFault(fault)}` })),
    ...holders.map(({ at, holder }) => ({ at, text: `${replicaOf(holder)} leads` })),
  ]
    .sort((a, b) => a.at.getTime() - b.at.getTime())
    .map(({ at, text }) => `[chaos]   ${at.toISOString()} ${text}`);
}

describe('two controller replicas under chaos', () => {
  it('never let a withdrawn grant check true once acknowledged, and leave SpiceDB without drift', async () => {
    const churn = new GrantChurn(resources, aclNamespace, itemIds, LIMITS);
    const checker = new RevocationChecker(
      kubeConfig,
      aclNamespace,
      churn.withdrawn,
      spicedb.client,
      registry,
    );
    const injector = new FaultInjector(replicas, lease, TIMINGS);
    await injector.leader();
    await churn.seed(SEED_GRANTS);

    const started = Date.now();
    let faulting = true;
    const faults = injector
      .run((done) => Date.now() - started < CHURN_MS || done < FAULT_PLAN.length)
      .finally(() => (faulting = false));
    await Promise.all([
      faults,
      churn.run(() => faulting, CHURN_WORKERS, CHURN_INTERVAL_MS),
      checker.run(() => faulting, CHECK_INTERVAL_MS),
    ]);
    const churnSeconds = Math.round((Date.now() - started) / 1000);

    injector.healAll();
    await injector.leader();
    await waitForSettledStatuses();
    for (let pass = 0; pass < 3; pass += 1) {
      await checker.pass();
      await sleep(CHECK_INTERVAL_MS);
    }
    const grants = await listGrants(kubeConfig, aclNamespace);
    const wanted = effectiveProjection({
      grants,
      items: await listItems(kubeConfig, resources.scope),
      aclNamespace,
      registry,
      now: new Date(),
    });
    const drift = compareTuples(wanted, await managedTuples(spicedb.client, registry));

    const kills = injector.records.filter(({ fault }) => fault.kind === 'kill').length;
    console.log(
      [
        `[chaos] ${churnSeconds} s of churn: ${JSON.stringify(churn.counts)} (${grants.length} grants left)`,
        `[chaos] ${injector.records.length} faults (${kills} kills), ${lease.failovers} failovers observed`,
        ...timeline(injector.records, lease.history),
        `[chaos] ${churn.withdrawn.size} grants withdrawn, ${checker.acknowledged} acknowledged, ` +
          `${checker.checks} checks, ${checker.violations.length} violations`,
        `[chaos] drift: ${drift.missing.length} missing, ${drift.orphan.length} orphan, ` +
          `${drift.misdated.length} misdated (of ${wanted.size} wanted)`,
      ].join('\n'),
    );

    expect(injector.records.length).toBeGreaterThanOrEqual(10);
    expect(lease.failovers).toBeGreaterThanOrEqual(kills);
    expect(checker.acknowledged).toBe(churn.withdrawn.size);
    const account = (keys: string[]) => keys.map((key) => accountForTuple(key, grants, churn));
    expect({
      violations: checker.violations.map((violation) => ({
        ...violation,
        history: churn.historyOf(violation.grant),
      })),
      missing: account(drift.missing),
      orphan: account(drift.orphan),
      misdated: account(drift.misdated),
    }).toEqual({ violations: [], missing: [], orphan: [], misdated: [] });
  });
});
