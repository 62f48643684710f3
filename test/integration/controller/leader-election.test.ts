import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../dev/wait/until.js';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import {
  individual,
  makeStateDir,
  Resources,
  startLeadingControllerProcess,
  startOwnSpiceDB,
  startTestController,
  userCan,
  waitUntilLeading,
  type ControllerProcess,
  type OwnSpiceDB,
  type TestControllerOptions,
} from './support/harness.js';

// Two replicas: the first runs as its own process (the real entrypoint, src/cmd/controller.ts) so that it can
// die by SIGKILL, without releasing its lease; the second runs in this process and must take over once the lease
// (4 s here) expires, then act on everything that happened while nobody led.

let stateDir: string;
let spicedb: OwnSpiceDB;
let resources: Resources;
let aclNamespace: string;
let options: TestControllerOptions;
let first: ControllerProcess;
let second: RunningController;

async function readiness(url: string): Promise<{ status: number; leader?: boolean }> {
  const response = await fetch(`${url}/healthz/ready`);
  return { status: response.status, ...((await response.json()) as { leader?: boolean }) };
}

beforeAll(async () => {
  stateDir = await makeStateDir('controller-leader');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-leader');
  const scope = uniqueId('leader');
  resources = new Resources(testKubeConfig(), scope);
  aclNamespace = await resources.namespace('acl');
  options = { spicedb: spicedb.server, aclNamespace, scope, logFile: join(stateDir, 'second.log') };
  first = await startLeadingControllerProcess('controller-first', {
    ...options,
    logFile: join(stateDir, 'first.log'),
  });
  second = await startTestController(options);
  await until(() => second.hasSynced(), 'the second controller to sync its caches', 30_000);
}, 120_000);

afterAll(async () => {
  await first?.process.kill();
  await second?.stop();
  await spicedb?.stop();
  await resources?.cleanUp();
});

describe('two controller replicas', () => {
  it('have one leader; when it dies, the other takes over once the lease expires and misses nothing', async () => {
    expect(second.isLeader()).toBe(false);
    expect(await readiness(second.url)).toMatchObject({ status: 200, leader: false });
    const item = await resources.createItem();
    const early = individual(item.spec.itemId);
    const earlyGrant = await resources.createGrant(aclNamespace, early);
    await resources.waitForReason(aclNamespace, earlyGrant.name, EnforcedReason.Projected);

    await first.process.kill();
    const late = individual(item.spec.itemId, ['file']);
    const lateGrant = await resources.createGrant(aclNamespace, late);
    await resources.revoke(aclNamespace, earlyGrant.name);

    // The dead leader never released the lease: the second takes over once it expires.
    await waitUntilLeading(second, 60_000);
    const enforced = await resources.waitForReason(aclNamespace, lateGrant.name, EnforcedReason.Projected);
    const revoked = await resources.waitForReason(aclNamespace, earlyGrant.name, EnforcedReason.Revoked);
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', late.userId, enforced)).toBe(
      true,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', early.userId, revoked)).toBe(
      false,
    );
  });
});
