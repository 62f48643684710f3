import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import { startLocalControlPlane, type LocalControlPlane } from '../../../dev/localplane/control-plane.js';
import { resolveToolPaths, type ToolPaths } from '../../../dev/localplane/tool-paths.js';
import { controlPlane, uniqueId } from '../support/cluster.js';
import {
  individual,
  makeStateDir,
  Resources,
  startOwnSpiceDB,
  startTestController,
  userCan,
  waitUntilLeading,
  type OwnSpiceDB,
} from './support/harness.js';

// kube-apiserver restarts under a running controller: its watches break, the informers relist and re-watch,
// and every change made after the restart is acted on. A control plane of the test's own, so that the
// shared one never goes away under other test files.

let stateDir: string;
let plane: LocalControlPlane;
let spicedb: OwnSpiceDB;
let controller: RunningController;
let resources: Resources;
let aclNamespace: string;

async function toolPaths(): Promise<ToolPaths> {
  const { tools } = controlPlane();
  const complete = ['etcd', 'kubeApiserver', 'kubectl', 'spicedb', 'helm'].every(
    (name) => tools[name as keyof ToolPaths],
  );
  return complete ? (tools as ToolPaths) : resolveToolPaths();
}

beforeAll(async () => {
  stateDir = await makeStateDir('controller-apiserver-restart');
  [plane, spicedb] = await Promise.all([
    toolPaths().then((tools) => startLocalControlPlane({ stateDir: stateDir, withSpiceDB: false, tools })),
    startOwnSpiceDB(stateDir, 'spicedb-apiserver-restart'),
  ]);
  const scope = uniqueId('restart');
  resources = new Resources(plane.kubeConfig(), scope);
  aclNamespace = await resources.namespace('acl');
  controller = await startTestController({
    kubeconfigPath: plane.kubeconfigPath,
    spicedb: spicedb.server,
    aclNamespace,
    scope,
    logFile: `${stateDir}/controller.log`,
    // Renewals fail while kube-apiserver is down; a lease longer than the restart keeps the leader leading.
    env: { LEASE_DURATION: '60s', RENEW_DEADLINE: '50s', RETRY_PERIOD: '1s' },
  });
  await waitUntilLeading(controller);
}, 240_000);

afterAll(async () => {
  await controller?.stop();
  await spicedb?.stop();
  await plane?.stop();
  // Logs stay for a look after a failure; the data does not.
  if (stateDir) await rm(join(stateDir, 'etcd-data'), { recursive: true, force: true });
});

describe('a kube-apiserver restart', () => {
  it('loses no event: changes made right after the restart are all enforced', async () => {
    const item = await resources.createItem();
    const kept = individual(item.spec.itemId);
    const toRevoke = individual(item.spec.itemId, ['file']);
    const [keptGrant, revokedGrant] = [
      await resources.createGrant(aclNamespace, kept),
      await resources.createGrant(aclNamespace, toRevoke),
    ];
    await resources.waitForReason(aclNamespace, keptGrant.name, EnforcedReason.Projected);
    await resources.waitForReason(aclNamespace, revokedGrant.name, EnforcedReason.Projected);

    await plane.restartKubeApiserver();
    const added = individual(item.spec.itemId, ['sub']);
    const addedGrant = await resources.createGrant(aclNamespace, added);
    await resources.revoke(aclNamespace, revokedGrant.name);

    const enforced = await resources.waitForReason(
      aclNamespace,
      addedGrant.name,
      EnforcedReason.Projected,
      60_000,
    );
    const revoked = await resources.waitForReason(
      aclNamespace,
      revokedGrant.name,
      EnforcedReason.Revoked,
      60_000,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'sub_consumer', added.userId, enforced)).toBe(
      true,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', toRevoke.userId, revoked)).toBe(
      false,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', kept.userId)).toBe(true);
    expect(controller.isLeader()).toBe(true);
  });
});
