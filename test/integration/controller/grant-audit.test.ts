import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import type { ControllerEnvironment } from '../../../src/controller/controller-config.js';
import { POLICY_GRANT_RESOURCE } from '../../../src/api/v1alpha1/index.js';
import { REQUESTER_ANNOTATION, UNKNOWN_DELETER } from '../../../src/controller/audit/kubernetes-actor.js';
import { collectionPath, isConflict, KubeClient } from '../../../src/kube/index.js';
import { grantPolicies } from '../admission/grant-policies.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { testKubeClient, testKubeConfig, uniqueId } from '../support/cluster.js';
import { asSuperuser, testDatabase, withDatabase } from '../support/database.js';
import {
  individual,
  metricValue,
  SCOPE_LABEL,
  startTestController,
  useControllerFixture,
  waitUntilLeading,
} from './support/harness.js';

// Grant changes made with the kube API as kubectl or a GitOps tool would (their own field manager, as users the
// admin impersonates) are recorded by the controller, once each, across a restart, under the requester the
// chart's admission policy stamps (`kubernetes:<username>`); changes by the ACL API's identity are not (the API
// records those), and a field manager never makes a change the API's nor names a user. Real kube-apiserver (with
// the chart's grant policies), SpiceDB, PostgreSQL and controller.

const policies = grantPolicies();
const env: ControllerEnvironment = {
  AUDIT_ACTOR_FROM: 'admission',
  ACL_API_KUBERNETES_USER: policies.aclApiUser,
};
const ARGO_CD = 'system:serviceaccount:argocd:argocd-application-controller';
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

const fixture = useControllerFixture('grant-audit', env);
const kube = testKubeClient();

// The impersonated users may do anything in the controller's namespace: only admission judges their writes.
beforeAll(async () => {
  await policies.install([fixture.aclNamespace]);
  await kube.call({
    method: 'POST',
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${fixture.aclNamespace}/rolebindings`,
    body: {
      metadata: { name: 'grant-writers' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: ['alice', 'bob', 'mallory', ARGO_CD, policies.aclApiUser].map((name) => ({
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'User',
        name,
      })),
    },
  });
});
afterAll(() => policies.remove());

const clientsAs = new Map<string, KubeClient>();

/** The test's access, impersonating `user`. */
function kubeAs(user: string): KubeClient {
  let client = clientsAs.get(user);
  if (!client) {
    const config = testKubeConfig();
    const users = config.users.map((entry) => ({ ...entry, impersonateUser: user }));
    config.loadFromOptions({ ...config, users, currentContext: config.currentContext });
    client = new KubeClient(config);
    clientsAs.set(user, client);
  }
  return client;
}

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
  await expect.poll(async () => (await recordsOf(uid)).length, { timeout: POLL_TIMEOUT_MS }).toBe(count);
  return recordsOf(uid);
}

function grantPath(name: string): string {
  return `${collectionPath(POLICY_GRANT_RESOURCE, fixture.aclNamespace)}/${name}`;
}

/**
 * Creates a grant in the controller's scope as `user` with `fieldManager` (kubectl, a GitOps tool, the ACL API),
 * with the annotations the client chose.
 */
function createAs(
  user: string,
  fieldManager: string,
  spec: PolicyGrantSpec,
  annotations: Record<string, string> = {},
): Promise<PolicyGrant> {
  return kubeAs(user).call<PolicyGrant>({
    method: 'POST',
    path: collectionPath(POLICY_GRANT_RESOURCE, fixture.aclNamespace),
    query: { fieldManager },
    body: {
      apiVersion: GROUP_VERSION,
      kind: POLICY_GRANT_KIND,
      metadata: { name: uniqueId('grant'), labels: { [SCOPE_LABEL]: fixture.resources.scope }, annotations },
      spec,
    },
  });
}

/** Rewrites the grant's spec as `user` with `fieldManager`, retrying on a conflict with the controller's writes. */
async function updateAs(
  user: string,
  fieldManager: string,
  name: string,
  change: (spec: PolicyGrantSpec) => PolicyGrantSpec,
): Promise<PolicyGrant> {
  for (;;) {
    const grant = await fixture.resources.getGrant(fixture.aclNamespace, name);
    try {
      return await kubeAs(user).call<PolicyGrant>({
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
    path: collectionPath(POLICY_GRANT_RESOURCE, fixture.aclNamespace),
    query: { labelSelector: `${SCOPE_LABEL}=${fixture.resources.scope}` },
  });
  return list.items;
}

const revoked = (spec: PolicyGrantSpec): PolicyGrantSpec => ({
  ...spec,
  revokedAt: new Date().toISOString(),
  revokedBy: spec.policyType === 'INDIVIDUAL' ? spec.userId : 'someone',
});

/** A revocation as a GitOps change makes it: revokedBy, who revoked through the API, is the API's to set. */
const revokedInKubernetes = (spec: PolicyGrantSpec): PolicyGrantSpec => ({
  ...spec,
  revokedAt: new Date().toISOString(),
});

describe('grant changes made in Kubernetes', () => {
  it('a kubectl create, edit and delete: one record each, the requester as actor, the chain intact', async () => {
    const item = await fixture.resources.createItem();
    const created = await createAs('alice', 'kubectl-client-side-apply', individual(item.spec.itemId));
    const uid = created.metadata.uid ?? '';
    const [creation] = await awaitRecords(uid, 1);
    expect(creation).toMatchObject({
      actor: { type: 'kubernetes', id: 'kubernetes:alice' },
      action: 'policy.created',
      target: { kind: 'policy', id: uid, itemId: item.spec.itemId },
      outcome: { status: 201, detail: `${fixture.aclNamespace}/${created.metadata.name} generation 1` },
      requestId: `kubernetes/${uid}/1`,
    });

    const name = created.metadata.name ?? '';
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    await updateAs('bob', 'kubectl-edit', name, revokedInKubernetes);
    const change = (await awaitRecords(uid, 2))[1];
    expect(change).toMatchObject({
      actor: { type: 'kubernetes', id: 'kubernetes:bob' },
      action: 'policy.changed',
      // The item's organisation, once the controller has the item (it had when it projected the grant).
      target: { kind: 'policy', id: uid, itemId: item.spec.itemId, organisationId: item.spec.organisationId },
      outcome: { status: 200, detail: expect.stringContaining('generation 2') },
    });

    await fixture.resources.deleteGrant(fixture.aclNamespace, name);
    await expect
      .poll(() => fixture.resources.grantExists(fixture.aclNamespace, name), { timeout: POLL_TIMEOUT_MS })
      .toBe(false);
    // The record is written before the finalizer goes: once the grant is gone, it is there.
    const records = await recordsOf(uid);
    expect(records.map((record) => record.action)).toEqual([
      'policy.created',
      'policy.changed',
      'policy.deleted',
    ]);
    // Kubernetes does not say who deleted: unknown, not bob, who made the last spec.
    expect(records[2]?.actor).toEqual({ type: 'kubernetes', id: UNKNOWN_DELETER });
    const owner = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      expect(await verifyChain(new AuditReader(owner), {})).toMatchObject({ valid: true, breaks: [] });
    } finally {
      await owner.end();
    }
  });

  it("a ServiceAccount's delete is recorded with an unknown deleter, never as the grant's creator", async () => {
    const item = await fixture.resources.createItem();
    const created = await createAs('alice', 'kubectl-client-side-apply', individual(item.spec.itemId));
    const uid = created.metadata.uid ?? '';
    const name = created.metadata.name ?? '';
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    await kubeAs(ARGO_CD).call({ method: 'DELETE', path: grantPath(name) });
    const [creation, deletion] = await awaitRecords(uid, 2);
    expect(creation?.actor).toEqual({ type: 'kubernetes', id: 'kubernetes:alice' });
    expect(deletion).toMatchObject({
      actor: { type: 'kubernetes', id: UNKNOWN_DELETER },
      action: 'policy.deleted',
      outcome: {
        status: 200,
        detail: `${fixture.aclNamespace}/${name} deleted (Kubernetes does not record who deletes an object)`,
      },
    });
  });

  it("across a restart: no duplicate, a change made while no controller ran is recorded once, the API identity's writes never", async () => {
    const item = await fixture.resources.createItem();
    const before = await createAs(ARGO_CD, 'argocd-controller', individual(item.spec.itemId));
    await awaitRecords(before.metadata.uid ?? '', 1);
    const api = policies.aclApiUser;
    const byApi = await createAs(api, ACL_API_FIELD_MANAGER, individual(item.spec.itemId, ['file']));
    const byApiName = byApi.metadata.name ?? '';
    await fixture.resources.waitForReason(fixture.aclNamespace, byApiName, EnforcedReason.Projected);
    // The identity makes a change the API's, not the field manager.
    await updateAs(api, 'kubectl-edit', byApiName, revoked);
    await fixture.resources.waitForReason(fixture.aclNamespace, byApiName, EnforcedReason.Revoked);

    await fixture.controller.stop();
    const whileStopped = await createAs(ARGO_CD, 'argocd-controller', individual(item.spec.itemId, ['sub']));
    fixture.controller = await startTestController({
      spicedb: fixture.spicedb.server,
      aclNamespace: fixture.aclNamespace,
      scope: fixture.resources.scope,
      logFile: `${fixture.stateDir}/controller-restarted.log`,
      env,
    });
    await waitUntilLeading(fixture.controller);

    const [missed] = await awaitRecords(whileStopped.metadata.uid ?? '', 1);
    expect(missed).toMatchObject({
      actor: { type: 'kubernetes', id: `kubernetes:${ARGO_CD}` },
      action: 'policy.created',
    });
    // The new controller looked at every grant of its scope at least once (its first list) ...
    const grants = await grantsInScope();
    await expect
      .poll(
        () =>
          metricValue(fixture.controller, 'controller_runtime_reconcile_total', {
            controller: 'policygrant-audit',
            result: 'success',
          }),
        { timeout: POLL_TIMEOUT_MS },
      )
      .toBeGreaterThanOrEqual(grants.length);
    // ... and recorded nothing twice, and nothing of what the ACL API's identity did.
    expect(await recordsOf(before.metadata.uid ?? '')).toHaveLength(1);
    expect(await recordsOf(whileStopped.metadata.uid ?? '')).toHaveLength(1);
    expect(await recordsOf(byApi.metadata.uid ?? '')).toEqual([]);
  });

  it("another user's change under the ACL API's field manager or a victim's id is recorded under that user", async () => {
    const item = await fixture.resources.createItem();
    const victim = randomUUID();
    const forged = { [REQUESTER_ANNOTATION]: policies.aclApiUser };
    const created = await createAs('mallory', ACL_API_FIELD_MANAGER, individual(item.spec.itemId), forged);
    const uid = created.metadata.uid ?? '';
    const [creation] = await awaitRecords(uid, 1);
    expect(creation).toMatchObject({
      actor: { type: 'kubernetes', id: 'kubernetes:mallory' },
      action: 'policy.created',
    });

    const name = created.metadata.name ?? '';
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    await updateAs('mallory', victim, name, revokedInKubernetes);
    const change = (await awaitRecords(uid, 2))[1];
    expect(change).toMatchObject({
      actor: { type: 'kubernetes', id: 'kubernetes:mallory' },
      action: 'policy.changed',
    });
    const { rows } = await asSuperuser(
      'SELECT id FROM audit.records WHERE actor_id = $1',
      [victim],
      database.name,
    );
    expect(rows).toEqual([]);
  });
});
