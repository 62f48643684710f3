import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TEST_TIMEOUT_MS } from '../../support/timeouts.js';
import { kubectl, sampleItemPartiesForFile, userCheckRequest } from '../../e2e/support/stack-client.js';
import { CheckLoopPod } from '../support/check-loop-pod.js';
import { release, upgradeRelease } from '../support/release.js';
import { decisionReplicas, everyReplica, grant, revoke } from '../support/production-topology.js';

// An upgrade with data on the production topology: hack/production-topology.sh installed the previous release
// (the chart as of a pinned commit of main, with its own production example); this test creates grants, then
// upgrades it to the working tree's chart with the production values (INSTALL_UPGRADE_ARGS: the arguments the
// production shape installs with, and a pod annotation that rolls every Deployment as a new image would) while the
// check loop asks the decision service's Service: no check fails, no grant is lost, every pod is replaced, every
// grant is Enforced afterwards and allowed by every replica.

const GRANTS = 30;
/** helm's own wait for the rollout: within the test's budget, so that helm's error names what is not Ready. */
const HELM_WAIT = '8m';
/** Thirty acknowledged grants, the rollout of every component, the checks afterwards, on a loaded node. */
const UPGRADE_BUDGET_MS = 3 * TEST_TIMEOUT_MS;

const parties = sampleItemPartiesForFile();

/** A line `<uid> <Enforced status>` of the listing below. */
const isEnforced = (line: string) => line.endsWith(' True');

describe('upgrade from the previous release', () => {
  it('keeps every grant enforced and fails no check', { timeout: UPGRADE_BUDGET_MS }, async () => {
    const { namespace } = release();
    const users: string[] = [];
    const policyIds: string[] = [];
    for (let index = 0; index < GRANTS; index++) {
      const userId = randomUUID();
      const granted = await grant(parties.owner, parties.item, userId, true);
      expect(granted.enforced).toBe(true);
      users.push(userId);
      policyIds.push(granted.policyId);
    }
    const gone = randomUUID();
    await revoke(parties.owner, (await grant(parties.owner, parties.item, gone, true)).policyId, true);
    const loop = await CheckLoopPod.start([
      ...users
        .slice(0, 3)
        .map((userId) => ({ body: userCheckRequest(userId, parties.item.itemId), allowed: true })),
      { body: userCheckRequest(gone, parties.item.itemId), allowed: false },
    ]);
    try {
      const upgradeArgs = JSON.parse(process.env.INSTALL_UPGRADE_ARGS ?? '[]') as string[];
      expect(upgradeArgs, 'INSTALL_UPGRADE_ARGS (hack/chart-e2e.sh)').not.toEqual([]);
      const podsBefore = (await decisionReplicas()).map((replica) => replica.pod);
      const started = Date.now();
      await upgradeRelease(upgradeArgs, HELM_WAIT);
      const upgradedMs = Date.now() - started;
      const { phase, summary } = await loop.stop();
      // uid and Enforced status only: a release may hold thousands of grants.
      const statuses = await kubectl(
        'get',
        'policygrants',
        '-n',
        namespace,
        '-o',
        'jsonpath={range .items[*]}{.metadata.uid} {.status.conditions[?(@.type=="Enforced")].status}{"\\n"}{end}',
      );
      const ours = statuses.split('\n').filter((line) => policyIds.includes(line.split(' ')[0] as string));
      const decisions = (
        await Promise.all(
          users.map(async (userId) =>
            everyReplica(await decisionReplicas(), parties.checker, userId, parties.item.itemId),
          ),
        )
      ).flat();
      console.log(
        `[production] helm upgrade from the previous release in ${upgradedMs} ms: ${summary.answered} checks, ` +
          `${summary.failed} failed ${JSON.stringify(summary.failures)} in ${JSON.stringify(summary.outages)}, ` +
          `${summary.violations} violations; ${ours.length} of ${GRANTS} grants kept, ` +
          `${ours.filter(isEnforced).length} Enforced; ${decisions.filter((allowed) => allowed === true).length} ` +
          `of ${decisions.length} replica checks allow`,
      );
      expect(phase).toBe('Succeeded');
      expect(summary).toMatchObject({ failed: 0, violations: 0, stopped: true });
      expect(ours.filter(isEnforced)).toHaveLength(GRANTS);
      expect(decisions.every((allowed) => allowed === true)).toBe(true);
      // Every decision pod was replaced under the loop, as a release's new image replaces it.
      const podsAfter = (await decisionReplicas()).map((replica) => replica.pod);
      expect(podsAfter.filter((pod) => podsBefore.includes(pod))).toEqual([]);
    } finally {
      await loop.remove();
    }
  });
});
