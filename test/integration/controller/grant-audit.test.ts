import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  EnforcedReason,
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../../src/api/v1alpha1/index.js';
import { AuditReader } from '../../../src/audit/audit-reader.js';
import type { AuditRecord } from '../../../src/audit/audit-record.js';
import { AuditStore } from '../../../src/audit/audit-store.js';
import { verifyChain } from '../../../src/audit/chain-verifier.js';
import { ACL_API_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import { migrate, WRITER_ROLE } from '../../../src/audit/migrations.js';
import { recordFromRow, RECORD_COLUMNS, type RecordRow } from '../../../src/audit/record-rows.js';
import type { ControllerEnvironment } from '../../../src/controller/config.js';
import { POLICY_GRANT_RESOURCE } from '../../../src/api/v1alpha1/index.js';
import { isConflict } from '../../../src/runtime/index.js';
import { collectionPath } from '../../../src/kube/index.js';
import { PATIENCE_MS } from '../../support/patience.js';
import { testKubeClient, uniqueId } from '../support/cluster.js';
import { asSuperuser, testDatabase, withDatabase } from '../support/database.js';
import {
  individual,
  metricValue,
  SCOPE_LABEL,
  startTestController,
  useControllerFixture,
  waitUntilLeading,
} from './support/harness.js';

// Grant changes made with the kube API as kubectl or a GitOps tool would (their own field manager) are
// recorded by the controller, once each, across a restart; changes under the ACL API's field manager are not
// (the API records those). Real kube-apiserver, SpiceDB, PostgreSQL and controller.

const env: ControllerEnvironment = {};
let database: { name: string; url: string };

// The controller connects as a login role that may only INSERT and SELECT, as in production.
beforeAll(async () => {
  database = await testDatabase('grant_audit');
  const owner = new AuditStore({ connectionString: database.url });
  expect(await migrate(owner.pool)).toEqual([1, 2, 3]);
  await owner.close();
  const login = uniqueId('controller').replace(/[^a-z0-9]/g, '_');
  await asSuperuser(`CREATE ROLE ${login} LOGIN PASSWORD 'writer' IN ROLE ${WRITER_ROLE}`);
  env.DATABASE_URL = withDatabase(database.url, { user: login, password: 'writer' });
});

const world = useControllerFixture('grant-audit', env);
const kube = testKubeClient();

async function recordsOf(uid: string): Promise<AuditRecord[]> {
  const { rows } = await asSuperuser<RecordRow>(
    `SELECT ${RECORD_COLUMNS} FROM audit.records WHERE target_id = $1 ORDER BY id`,
    [uid],
    database.name,
  );
  return rows.map(recordFromRow);
}

/** Polls until the grant has `count` records; returns them. */
async function awaitRecords(uid: string, count: number): Promise<AuditRecord[]> {
  await expect.poll(async () => (await recordsOf(uid)).length, { timeout: PATIENCE_MS }).toBe(count);
  return recordsOf(uid);
}

function grantPath(name: string): string {
  return `${collectionPath(POLICY_GRANT_RESOURCE, world.aclNamespace)}/${name}`;
}

/** Creates a grant in the controller's scope as `fieldManager` would (kubectl, a GitOps tool, the ACL API). */
function createAs(fieldManager: string, spec: PolicyGrantSpec): Promise<PolicyGrant> {
  return kube.call<PolicyGrant>({
    method: 'POST',
    path: collectionPath(POLICY_GRANT_RESOURCE, world.aclNamespace),
    query: { fieldManager },
    body: {
      apiVersion: GROUP_VERSION,
      kind: POLICY_GRANT_KIND,
      metadata: { name: uniqueId('grant'), labels: { [SCOPE_LABEL]: world.resources.scope } },
      spec,
    },
  });
}

/** Rewrites the grant's spec as `fieldManager`, retrying on a conflict with the controller's writes. */
async function updateAs(
  fieldManager: string,
  name: string,
  change: (spec: PolicyGrantSpec) => PolicyGrantSpec,
): Promise<PolicyGrant> {
  for (;;) {
    const grant = await world.resources.getGrant(world.aclNamespace, name);
    try {
      return await kube.call<PolicyGrant>({
        method: 'PUT',
        path: grantPath(name),
        query: { fieldManager },
        body: { ...grant, spec: change(grant.spec) },
      });
    } catch (error) {
      if (!isConflict(error)) throw error;
    }
  }
}

async function grantsInScope(): Promise<PolicyGrant[]> {
  const list = await kube.call<{ items: PolicyGrant[] }>({
    method: 'GET',
    path: collectionPath(POLICY_GRANT_RESOURCE, world.aclNamespace),
    query: { labelSelector: `${SCOPE_LABEL}=${world.resources.scope}` },
  });
  return list.items;
}

const revoked = (spec: PolicyGrantSpec): PolicyGrantSpec => ({
  ...spec,
  revokedAt: new Date().toISOString(),
  revokedBy: spec.policyType === 'INDIVIDUAL' ? spec.userId : 'someone',
});

describe('grant changes made in Kubernetes', () => {
  it('a kubectl create, edit and delete: one record each, the field manager as actor, the chain intact', async () => {
    const item = await world.resources.createItem();
    const created = await createAs('kubectl-client-side-apply', individual(item.spec.itemId));
    const uid = created.metadata.uid ?? '';
    const [creation] = await awaitRecords(uid, 1);
    expect(creation).toMatchObject({
      actor: { type: 'kubernetes', id: 'kubectl-client-side-apply' },
      action: 'policy.created',
      target: { kind: 'policy', id: uid, itemId: item.spec.itemId },
      outcome: { status: 201, detail: `${world.aclNamespace}/${created.metadata.name} generation 1` },
      requestId: `kubernetes/${uid}/1`,
    });

    const name = created.metadata.name ?? '';
    await world.resources.waitForReason(world.aclNamespace, name, EnforcedReason.Projected);
    await updateAs('kubectl-edit', name, revoked);
    const change = (await awaitRecords(uid, 2))[1];
    expect(change).toMatchObject({
      // Both of the latest second are named when the create and the edit share one (times are whole seconds).
      actor: { type: 'kubernetes', id: expect.stringContaining('kubectl-edit') },
      action: 'policy.changed',
      // The item's organisation, once the controller has the item (it had when it projected the grant).
      target: { kind: 'policy', id: uid, itemId: item.spec.itemId, organisationId: item.spec.organisationId },
      outcome: { status: 200, detail: expect.stringContaining('generation 2') },
    });

    await world.resources.deleteGrant(world.aclNamespace, name);
    await expect
      .poll(() => world.resources.grantExists(world.aclNamespace, name), { timeout: PATIENCE_MS })
      .toBe(false);
    // The record is written before the finalizer goes: once the grant is gone, it is there.
    const records = await recordsOf(uid);
    expect(records.map((record) => record.action)).toEqual([
      'policy.created',
      'policy.changed',
      'policy.deleted',
    ]);
    expect(records[2]?.actor).toEqual(change?.actor);
    const owner = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      expect(await verifyChain(new AuditReader(owner), {})).toMatchObject({ valid: true, breaks: [] });
    } finally {
      await owner.end();
    }
  });

  it('across a restart: no duplicate, a change made while no controller ran is recorded once, API writes never', async () => {
    const item = await world.resources.createItem();
    const before = await createAs('argocd-controller', individual(item.spec.itemId));
    await awaitRecords(before.metadata.uid ?? '', 1);
    const byApi = await createAs(ACL_API_FIELD_MANAGER, individual(item.spec.itemId, ['file']));
    const byApiName = byApi.metadata.name ?? '';
    await world.resources.waitForReason(world.aclNamespace, byApiName, EnforcedReason.Projected);
    await updateAs(ACL_API_FIELD_MANAGER, byApiName, revoked);
    await world.resources.waitForReason(world.aclNamespace, byApiName, EnforcedReason.Revoked);

    await world.controller.stop();
    const whileStopped = await createAs('argocd-controller', individual(item.spec.itemId, ['sub']));
    world.controller = await startTestController({
      spicedb: world.spicedb.server,
      aclNamespace: world.aclNamespace,
      scope: world.resources.scope,
      logFile: `${world.stateDir}/controller-restarted.log`,
      env,
    });
    await waitUntilLeading(world.controller);

    const [missed] = await awaitRecords(whileStopped.metadata.uid ?? '', 1);
    expect(missed).toMatchObject({
      actor: { type: 'kubernetes', id: 'argocd-controller' },
      action: 'policy.created',
    });
    // The new controller looked at every grant of its scope at least once (its first list) ...
    const grants = await grantsInScope();
    await expect
      .poll(
        () =>
          metricValue(world.controller, 'controller_runtime_reconcile_total', {
            controller: 'policygrant-audit',
            result: 'success',
          }),
        { timeout: PATIENCE_MS },
      )
      .toBeGreaterThanOrEqual(grants.length);
    // ... and recorded nothing twice, and nothing of what the ACL API's field manager did.
    expect(await recordsOf(before.metadata.uid ?? '')).toHaveLength(1);
    expect(await recordsOf(whileStopped.metadata.uid ?? '')).toHaveLength(1);
    expect(await recordsOf(byApi.metadata.uid ?? '')).toEqual([]);
  });
});
