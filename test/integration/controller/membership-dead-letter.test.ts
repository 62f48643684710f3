import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningController } from '../../../src/controller/start-controller.js';
import { TcpProxy } from '../../support/tcp-proxy.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import {
  enforcedCondition,
  makeStateDir,
  metricValue,
  Resources,
  startOwnSpiceDB,
  startTestController,
  waitUntilLeading,
  type OwnSpiceDB,
} from './support/harness.js';

// A Membership whose projection keeps failing (SpiceDB unreachable behind a partitioned proxy) is a dead
// letter: visible on the object and counted in policygrant_membership_dead_letter; cleared once SpiceDB is back.

let spicedb: OwnSpiceDB;
let proxy: TcpProxy;
let controller: RunningController;
let resources: Resources;
let aclNamespace: string;

beforeAll(async () => {
  const stateDir = await makeStateDir('controller-membership-dead-letter');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-dead-letter');
  proxy = await TcpProxy.start({ target: spicedb.server.endpoint });
  const scope = uniqueId('dead-letter');
  resources = new Resources(testKubeConfig(), scope);
  aclNamespace = await resources.namespace('acl');
  controller = await startTestController({
    spicedb: { endpoint: proxy.endpoint, token: spicedb.server.token },
    aclNamespace,
    scope,
    logFile: `${stateDir}/controller.log`,
  });
  await waitUntilLeading(controller);
});

afterAll(async () => {
  proxy?.resume();
  await controller?.stop();
  await proxy?.close();
  await spicedb?.stop();
  await resources?.cleanUp();
});

// Computed from the controller's cache at each scrape: it follows the status the test reads from the API server
// once the controller's watch has delivered it, so it is polled.
const deadLetters = () => metricValue(controller, 'policygrant_membership_dead_letter');

describe('a Membership that cannot be projected', () => {
  it('shows ProjectionFailed and counts as a dead letter while SpiceDB is unreachable, and recovers after', async () => {
    proxy.pause('drop');
    const { name } = await resources.createMembership(aclNamespace, {
      organisationId: randomUUID(),
      userId: randomUUID(),
    });

    const failed = await resources.waitForMembershipReason(aclNamespace, name, 'ProjectionFailed');
    expect(enforcedCondition(failed)).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/\S/),
    });
    await expect.poll(deadLetters).toBe(1);
    await expect
      .poll(() =>
        metricValue(controller, 'controller_runtime_reconcile_errors_total', { controller: 'membership' }),
      )
      .toBeGreaterThan(0);

    proxy.resume();
    const projected = await resources.waitForMembershipReason(aclNamespace, name, 'Projected');
    expect(enforcedCondition(projected)?.status).toBe('True');
    await expect.poll(deadLetters).toBe(0);
  });
});
