import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSpiceDB, type SpiceDBServer } from '../../../dev/localplane/spicedb-server.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import type { EnforcementReport } from '../../../src/acl/policies/enforcement-wait.js';
import { POLICY_GRANT_RESOURCE, type PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import { objectPath } from '../../../src/kube/index.js';
import { AclHarness, individual, until, type Caller } from '../acl/support/acl-harness.js';
import {
  makeStateDir,
  Resources,
  SCOPE_LABEL,
  spicedbBinary,
  startOwnSpiceDB,
  startTestController,
  waitUntilLeading,
  type OwnSpiceDB,
} from '../controller/support/harness.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import { testDatabase } from '../support/database.js';
import {
  startServiceUnderTest,
  untilReady,
  type DecisionServiceUnderTest,
} from './support/decision-service.js';
import { apiCheck } from './support/service-on-own-spicedb.js';

// "Acknowledged" across decision replicas, on the production topology: SpiceDB on PostgreSQL written by the
// controller, a read-only SpiceDB on the same database (with the Watch heartbeat the dev stack sets) that three
// decision services check through, each with its own revision barrier and decision cache, and the ACL API, which
// knows the three. A change answered with `Prefer: wait` and `enforced: true` must then hold on every replica at
// once, for a check without a token: each replica's Watch has delivered it (GET /watch/passed), so its barrier
// evaluates the check at least as fresh as the change. Without that, a replica whose Watch had not polled
// PostgreSQL yet answered from before the change (up to the heartbeat, 100 ms here).

const REPLICAS = 3;
const ROUNDS = 10;
const GRANTS_PER_ROUND = 10;
const WAIT = { prefer: 'wait=30' };

let stateDir: string;
let writer: OwnSpiceDB;
let readOnly: SpiceDBServer;
let resources: Resources;
let controller: RunningController;
const replicas: DecisionServiceUnderTest[] = [];
const acl = new AclHarness();

beforeAll(async () => {
  stateDir = await makeStateDir('replica-freshness');
  const datastore = { engine: 'postgres' as const, url: (await testDatabase('spicedb_replicas')).url };
  writer = await startOwnSpiceDB(stateDir, 'spicedb-writer', datastore);
  readOnly = await startSpiceDB({
    binary: await spicedbBinary(),
    stateDir,
    name: 'spicedb-read-only',
    datastore,
    extraArgs: ['--datastore-readonly'],
  });
  const scope = uniqueId('replica-freshness');
  resources = new Resources(testKubeConfig(), scope);
  const aclNamespace = await resources.namespace('acl');
  controller = await startTestController({
    spicedb: writer.server,
    aclNamespace,
    scope,
    logFile: `${stateDir}/controller.log`,
  });
  await waitUntilLeading(controller);
  for (let index = 0; index < REPLICAS; index++) {
    replicas.push(await startServiceUnderTest({ spicedb: readOnly }));
  }
  await Promise.all(replicas.map((replica) => untilReady(replica)));
  await acl.start('replica-freshness', {
    namespace: aclNamespace,
    decisionReplicas: { kind: 'static', urls: replicas.map((replica) => replica.url) },
  });
});

afterAll(async () => {
  await acl.stop();
  await Promise.all(replicas.map((replica) => replica.stop()));
  await controller?.stop();
  await readOnly?.process.stop();
  await writer?.stop();
  await resources?.cleanUp();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** What each replica answers for the user's check on the item, right now, without a token. */
async function everyReplicaAllows(userId: string, itemId: string): Promise<boolean[]> {
  return Promise.all(
    replicas.map(async (replica) => (await replica.check(apiCheck(userId, itemId))).body.result.allowed),
  );
}

/**
 * The controller of this file reconciles its scope only: the label brings the API's grants into it, as kubectl
 * would, while the create waits for their enforcement.
 */
async function bringIntoScope(userIds: readonly string[]): Promise<void> {
  const labelled = new Set<string>();
  await until(async () => {
    for (const grant of await acl.listGrants()) {
      const { name = '', labels = {} } = grant.metadata;
      if (!userIds.includes(grant.spec.userId ?? '') || labelled.has(name) || labels[SCOPE_LABEL]) continue;
      await acl.kube.call<PolicyGrant>({
        method: 'PATCH',
        path: objectPath(POLICY_GRANT_RESOURCE, { namespace: acl.namespace, name }),
        body: { metadata: { labels: { [SCOPE_LABEL]: resources.scope } } },
      });
      labelled.add(name);
    }
    return labelled.size === userIds.length;
  }, 'the created grants to be labelled');
}

async function createAcknowledged(owner: Caller, itemId: string, userIds: readonly string[]) {
  const created = acl.request<{ results: EnforcementReport[] }>('POST', '/policy', {
    caller: owner,
    body: { request: userIds.map((userId) => individual(itemId, userId)) },
    headers: WAIT,
  });
  await bringIntoScope(userIds);
  const answer = await created;
  expect(answer.status).toBe(201);
  return answer.body.results;
}

describe('an acknowledged change holds on every decision replica, without a token', () => {
  it(`${ROUNDS * GRANTS_PER_ROUND} grants and revocations answered with Prefer: wait: every replica allows, then none`, async () => {
    const owner = await acl.user();
    const organisationId = randomUUID();
    const { spec: item } = await resources.createItem({ ownerId: owner.id, organisationId });
    await until(() => acl.api.cache.itemsWithId(item.itemId).length > 0, 'the item in the API’s cache');
    const deniedAfterGrant: string[] = [];
    const allowedAfterRevocation: string[] = [];
    const unconfirmed: EnforcementReport[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const userIds = Array.from({ length: GRANTS_PER_ROUND }, () => randomUUID());
      const reports = await createAcknowledged(owner, item.itemId, userIds);
      unconfirmed.push(...reports.filter((report) => !report.enforced));
      for (const [index, userId] of userIds.entries()) {
        const answers = await everyReplicaAllows(userId, item.itemId);
        if (answers.includes(false)) deniedAfterGrant.push(`round ${round}, grant ${index}: ${answers}`);
      }
      for (const [index, report] of reports.entries()) {
        const revoked = await acl.request<{ results: EnforcementReport[] }>(
          'DELETE',
          `/policy?id=${report.policyId}`,
          {
            caller: owner,
            headers: WAIT,
          },
        );
        expect(revoked.status).toBe(200);
        const [revocation] = revoked.body.results;
        if (!revocation?.enforced) unconfirmed.push(revocation as EnforcementReport);
        const answers = await everyReplicaAllows(userIds[index] ?? '', item.itemId);
        if (answers.includes(true)) allowedAfterRevocation.push(`round ${round}, grant ${index}: ${answers}`);
      }
    }
    expect(allowedAfterRevocation).toEqual([]);
    expect(deniedAfterGrant).toEqual([]);
    expect(unconfirmed).toEqual([]);
  });

  it('reports how many Ready replicas confirmed, and a replica that cannot confirm makes it not enforced', async () => {
    const owner = await acl.user();
    const { spec: item } = await resources.createItem({ ownerId: owner.id, organisationId: randomUUID() });
    await until(() => acl.api.cache.itemsWithId(item.itemId).length > 0, 'the item in the API’s cache');
    const [granted] = await createAcknowledged(owner, item.itemId, [randomUUID()]);
    expect(granted).toMatchObject({
      enforced: true,
      decisionReplicas: { ready: REPLICAS, passed: REPLICAS },
    });
    // A fourth replica that is not there: Ready as far as the API knows, it never confirms.
    const unreachable = new AclHarness();
    await unreachable.start('replica-freshness-missing', {
      namespace: acl.namespace,
      decisionReplicas: {
        kind: 'static',
        urls: [...replicas.map((replica) => replica.url), 'http://127.0.0.1:9'],
      },
    });
    try {
      // The same owner, with a token of this API's signing key.
      const sameOwner = await unreachable.user({ id: owner.id });
      const revoked = await unreachable.request<{ results: EnforcementReport[] }>(
        'DELETE',
        `/policy?id=${granted?.policyId}`,
        { caller: sameOwner, headers: { prefer: 'wait=10' } },
      );
      expect(revoked.status).toBe(200);
      expect(revoked.body.results).toEqual([
        expect.objectContaining({
          enforced: false,
          reason: 'Revoked',
          zedToken: expect.any(String),
          decisionReplicas: { ready: REPLICAS + 1, passed: REPLICAS },
        }),
      ]);
    } finally {
      await unreachable.stop();
    }
  });
});
