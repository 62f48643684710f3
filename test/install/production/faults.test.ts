import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TEST_TIMEOUT_MS } from '../../support/timeouts.js';
import {
  eventually,
  kubectl,
  sampleItemPartiesForFile,
  userCheckRequest,
} from '../../e2e/support/stack-client.js';
import { CheckLoopPod, type Outage } from '../support/check-loop-pod.js';
import { release } from '../support/release.js';
import {
  DECISION_SELECTOR,
  decisionReplicas,
  everyReplica,
  grant,
  readyPods,
  revoke,
  topology,
} from '../support/production-topology.js';

// Faults of the production topology under a check loop in a pod that asks the decision service's Service, as a
// gateway does, for a granted user (due: allow) and a revoked one (due: deny): every answer is the truth or fails
// closed (a deny or a 503), never an allow of the revoked user, and the Service's checks recover on their own.
// During each fault a grant is revoked with `Prefer: wait`; when that is acknowledged, no replica allows it.

/** Each fault waits for pods to be replaced and Ready again: a test's budget each. */
const FAULTS_BUDGET_MS = 4 * TEST_TIMEOUT_MS;

const parties = sampleItemPartiesForFile();

interface Fault {
  name: string;
  /** Breaks something; answers once the break is done. */
  inject(): Promise<void>;
  /** Answers once what broke is back (its pods Ready). */
  recovered(): Promise<void>;
}

/** Waits until `count` pods of `selector` in `namespace` are Ready, none of them in `gone`. */
const readyAgain = (selector: string, namespace: string, count: number, gone: string[] = []) =>
  eventually(`${count} Ready pods of ${selector} in ${namespace}`, async () => {
    const names = (await readyPods(selector, namespace)).map((pod) => pod.metadata.name);
    return names.length >= count && names.every((name) => !gone.includes(name)) ? true : undefined;
  });

/** Deletes pods of `selector` (the first `howMany`, or all) and waits for as many Ready replacements. */
function podDeletion(name: string, selector: string, namespace: () => string, howMany?: number): Fault {
  let deleted: string[] = [];
  let replicas = 0;
  return {
    name,
    async inject() {
      const pods = (await readyPods(selector, namespace())).map((pod) => pod.metadata.name);
      replicas = pods.length;
      deleted = pods.slice(0, howMany ?? pods.length);
      await kubectl('delete', 'pod', '-n', namespace(), '--wait=false', ...deleted);
    },
    async recovered() {
      await readyAgain(selector, namespace(), replicas, deleted);
    },
  };
}

/** PostgreSQL's fast shutdown in its container: the kubelet restarts it on the same data. */
function postgresRestart(): Fault {
  const restarts = async () =>
    Number(
      await kubectl(
        'get',
        'pods',
        '-n',
        topology().db,
        '-l',
        'app=postgres',
        '-o',
        'jsonpath={.items[0].status.containerStatuses[0].restartCount}',
      ),
    );
  let before = 0;
  return {
    name: 'PostgreSQL restarted',
    async inject() {
      before = await restarts();
      await kubectl(
        'exec',
        '-n',
        topology().db,
        'deployment/postgres',
        '--',
        'pg_ctl',
        'stop',
        '-m',
        'fast',
        '-D',
        '/var/lib/postgresql/data',
      ).catch(() => undefined); // the exec may end with the container
    },
    async recovered() {
      await eventually('PostgreSQL to restart', async () => ((await restarts()) > before ? true : undefined));
      await readyAgain('app=postgres', topology().db, 1);
    },
  };
}

interface FaultFigures {
  fault: string;
  failedChecks: number;
  recoveryMs: number;
  revocation: { acknowledged: boolean; allowedBy: number };
}

/** The loop's outages that began within [from, to), as the fault's figures. */
function figuresOf(fault: string, outages: Outage[], from: number, to: number) {
  const within = outages.filter((outage) => outage.from >= from && outage.from < to);
  return {
    fault,
    failedChecks: within.reduce((sum, outage) => sum + outage.failed, 0),
    recoveryMs: within.length === 0 ? 0 : Math.max(...within.map((outage) => outage.to)) - from,
  };
}

/**
 * A grant revoked with `Prefer: wait` while the fault lasts: when acknowledged, how many replicas allow it. A
 * write the fault refuses (the audit trail shares PostgreSQL) acknowledges nothing, so there is nothing to check.
 */
async function revokeDuringFault(): Promise<{ acknowledged: boolean; allowedBy: number }> {
  const consumer = randomUUID();
  try {
    const granted = await grant(parties.owner, parties.item, consumer, true);
    const revoked = await revoke(parties.owner, granted.policyId, true);
    if (revoked.enforced !== true) return { acknowledged: false, allowedBy: 0 };
  } catch {
    return { acknowledged: false, allowedBy: 0 };
  }
  const decisions = await everyReplica(
    await decisionReplicas(),
    parties.checker,
    consumer,
    parties.item.itemId,
  );
  return { acknowledged: true, allowedBy: decisions.filter((allowed) => allowed === true).length };
}

describe('faults of the production topology', () => {
  it(
    'every check is the truth or fails closed, and the Service recovers by itself',
    { timeout: FAULTS_BUDGET_MS },
    async () => {
      const kept = randomUUID();
      const gone = randomUUID();
      expect((await grant(parties.owner, parties.item, kept, true)).enforced).toBe(true);
      const revokedGrant = await grant(parties.owner, parties.item, gone, true);
      expect((await revoke(parties.owner, revokedGrant.policyId, true)).enforced).toBe(true);
      const faults: Fault[] = [
        podDeletion('a SpiceDB pod deleted', 'app.kubernetes.io/name=spicedb', () => topology().spicedb, 1),
        postgresRestart(),
        podDeletion('a decision pod deleted', DECISION_SELECTOR, () => release().namespace, 1),
        podDeletion(
          'the read-only SpiceDB deleted (every pod)',
          'app.kubernetes.io/component=spicedb-read-only',
          () => release().namespace,
        ),
      ];
      const loop = await CheckLoopPod.start([
        { body: userCheckRequest(kept, parties.item.itemId), allowed: true },
        { body: userCheckRequest(gone, parties.item.itemId), allowed: false },
      ]);
      try {
        const windows: { fault: Fault; from: number; to: number; revocation: FaultFigures['revocation'] }[] =
          [];
        for (const fault of faults) {
          const from = Date.now();
          await fault.inject();
          const revocation = await revokeDuringFault();
          await fault.recovered();
          await loop.answeringRightSince(Date.now());
          windows.push({ fault, from, to: Date.now(), revocation });
        }
        const { phase, summary } = await loop.stop();
        const figures: FaultFigures[] = windows.map(({ fault, from, to, revocation }) => ({
          ...figuresOf(fault.name, summary.outages, from, to),
          revocation,
        }));
        console.log(
          `[production] faults under ${summary.answered} checks through the Service:\n` +
            figures
              .map(
                (figure) =>
                  `  ${figure.fault}: ${figure.failedChecks} failed checks, recovered after ${figure.recoveryMs} ms; ` +
                  `a revocation meanwhile ${figure.revocation.acknowledged ? 'acknowledged' : 'not acknowledged'}, ` +
                  `replicas allowing it: ${figure.revocation.allowedBy}`,
              )
              .join('\n') +
            `\n  violations (the revoked user allowed): ${summary.violations}; failures: ${JSON.stringify(summary.failures)}`,
        );
        expect(phase).toBe('Succeeded');
        expect(summary.violations).toBe(0);
        expect(figures.map((figure) => figure.revocation.allowedBy)).toEqual(faults.map(() => 0));
      } finally {
        await loop.remove();
      }
    },
  );
});
