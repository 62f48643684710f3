import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../../dev/wait/until.js';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import { FENCE_OBJECT_TYPE, FENCE_RELATION } from '../../../src/controller/fenced-spicedb.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import { encodeObjectId } from '../../../src/spicedb/object-id.js';
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
  type OwnSpiceDB,
  type TestControllerOptions,
} from './support/harness.js';

// Leadership changes against the real parts. The periodic resync is set to an hour: what is checked here must
// happen at once, not at the next resync.

const QUIET_RESYNC = { RESYNC_PERIOD: '1h' };

let stateDir: string;
let spicedb: OwnSpiceDB;
let resources: Resources;
let aclNamespace: string;
let scope: string;
const running: RunningController[] = [];

function options(name: string): TestControllerOptions {
  return {
    spicedb: spicedb.server,
    aclNamespace,
    scope,
    logFile: join(stateDir, `${name}.log`),
    // Longer than the harness's 4 s lease: a loaded machine must not depose the leader a test is about to freeze.
    env: { ...QUIET_RESYNC, LEASE_DURATION: '10s', RENEW_DEADLINE: '8s' },
  };
}

async function replica(name: string): Promise<RunningController> {
  const controller = await startTestController(options(name));
  running.push(controller);
  return controller;
}

async function fenceHolders(): Promise<string[]> {
  const holders: string[] = [];
  const pages = spicedb.client.readRelationships({
    resourceType: FENCE_OBJECT_TYPE,
    resourceId: encodeObjectId(`controller-${scope}`),
    relation: FENCE_RELATION,
  });
  for await (const page of pages) holders.push(...page.relationships.map((r) => r.subject.id));
  return holders;
}

beforeAll(async () => {
  stateDir = await makeStateDir('controller-fencing');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-fencing');
  scope = uniqueId('fencing');
  resources = new Resources(testKubeConfig(), scope);
  aclNamespace = await resources.namespace('acl');
}, 60_000);

afterAll(async () => {
  await Promise.all(running.map((controller) => controller.stop()));
  await spicedb?.stop();
  await resources?.cleanUp();
});

describe('leadership changes', () => {
  it('a narrowing edit made while the leader changes removes the old tuples with the first write', async () => {
    const first = await replica('narrowing-first');
    await waitUntilLeading(first);
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId, ['api', 'file']);
    const grant = await resources.createGrant(aclNamespace, spec);
    const enforced = await resources.waitForReason(aclNamespace, grant.name, EnforcedReason.Projected);
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', spec.userId, enforced)).toBe(
      true,
    );
    await first.stop();

    await resources.updateGrantSpec(aclNamespace, grant.name, (current) => ({
      ...current,
      constraints: { access: [{ accessType: 'api' }] },
    }));
    const second = await replica('narrowing-second');
    await waitUntilLeading(second);
    const narrowed = await resources.waitForReason(
      aclNamespace,
      grant.name,
      EnforcedReason.Projected,
      60_000,
    );

    expect(narrowed.metadata.generation).toBe(2);
    expect(narrowed.status?.projected?.relations).toEqual(['api_consumer']);
    // At the status's own ZedToken: the write that enforced generation 2 also removed the file tuple.
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', spec.userId, narrowed)).toBe(
      false,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, narrowed)).toBe(true);
    await second.stop();
  }, 180_000);

  it('a leader frozen past its lease writes nothing more when it wakes, and exits', async () => {
    // A process of its own (default settings: it exits on lost leadership).
    const frozen = await startLeadingControllerProcess('frozen-leader', options('frozen-leader'));
    const successor = await replica('successor');
    await until(() => successor.hasSynced(), 'the successor controller to sync its caches', 30_000);
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId);
    const grant = await resources.createGrant(aclNamespace, spec);
    await resources.waitForReason(aclNamespace, grant.name, EnforcedReason.Projected, 60_000);
    const [frozenTerm] = await fenceHolders();

    process.kill(frozen.process.pid, 'SIGSTOP'); // a GC pause, a suspended VM: no renewals, no exit
    try {
      await resources.revoke(aclNamespace, grant.name);
      await waitUntilLeading(successor, 60_000);
      const revoked = await resources.waitForReason(aclNamespace, grant.name, EnforcedReason.Revoked, 60_000);
      expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, revoked)).toBe(
        false,
      );
      expect(await fenceHolders()).not.toContain(frozenTerm);
    } finally {
      process.kill(frozen.process.pid, 'SIGCONT');
    }

    expect(await frozen.process.exited).toBe(1);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(false);
    // The successor's writes still land: the fence is its own.
    const later = individual(item.spec.itemId, ['file']);
    const laterGrant = await resources.createGrant(aclNamespace, later);
    const enforced = await resources.waitForReason(
      aclNamespace,
      laterGrant.name,
      EnforcedReason.Projected,
      60_000,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', later.userId, enforced)).toBe(
      true,
    );
    expect(await fenceHolders()).toHaveLength(1);
  }, 180_000);
});
