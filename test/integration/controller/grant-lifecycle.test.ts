import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EnforcedReason } from '../../../src/api/v1alpha1/index.js';
import { RELATIONSHIPS_FINALIZER } from '../../../src/controller/grant-writer.js';
import { ORGANISATION_LABEL } from '../../../src/controller/namespace-authorisation.js';
import type { RunningController } from '../../../src/controller/start-controller.js';
import { testKubeConfig, uniqueId } from '../support/cluster.js';
import {
  addMember,
  enforcedCondition,
  group,
  individual,
  makeStateDir,
  relationshipsOn,
  Resources,
  startOwnSpiceDB,
  startTestController,
  userCan,
  waitUntilLeading,
  type OwnSpiceDB,
} from './support/harness.js';

// The life of a grant, end to end: kube-apiserver (shared) → controller (in process) → SpiceDB (its own).

let stateDir: string;
let spicedb: OwnSpiceDB;
let controller: RunningController;
let resources: Resources;
let aclNamespace: string;

beforeAll(async () => {
  stateDir = await makeStateDir('controller-lifecycle');
  spicedb = await startOwnSpiceDB(stateDir, 'spicedb-lifecycle');
  const scope = uniqueId('lifecycle');
  resources = new Resources(testKubeConfig(), scope);
  aclNamespace = await resources.namespace('acl');
  controller = await startTestController({
    spicedb: spicedb.server,
    aclNamespace,
    scope,
    logFile: `${stateDir}/controller.log`,
  });
  await waitUntilLeading(controller);
});

afterAll(async () => {
  await controller?.stop();
  await spicedb?.stop();
  await resources?.cleanUp();
});

describe('an INDIVIDUAL grant', () => {
  it('is enforced: Enforced=True, the tuple checks true at the status ZedToken, and an Event says so', async () => {
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId, ['api', 'file']);
    const created = await resources.createGrant(aclNamespace, spec);
    const grant = await resources.waitForReason(aclNamespace, created.name, EnforcedReason.Projected);

    expect(enforcedCondition(grant)).toMatchObject({
      status: 'True',
      observedGeneration: grant.metadata.generation,
    });
    expect(grant.status).toMatchObject({ state: 'ACTIVE', relationships: 2, zedToken: expect.any(String) });
    expect(grant.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, grant)).toBe(true);
    expect(await userCan(spicedb.client, item.spec.itemId, 'file_consumer', spec.userId, grant)).toBe(true);
    expect(await userCan(spicedb.client, item.spec.itemId, 'sub_consumer', spec.userId, grant)).toBe(false);
    const tuple = (await relationshipsOn(spicedb.client, item.spec.itemId)).find(
      (r) => r.relation === 'api_consumer',
    );
    expect(tuple?.expiresAt?.toISOString()).toBe(new Date(spec.expiryTime).toISOString());
    // Events are written after the status, without waiting.
    await expect
      .poll(() => resources.listEvents(aclNamespace))
      .toContainEqual(
        expect.objectContaining({
          reason: 'Projected',
          regarding: expect.objectContaining({ name: created.name }),
        }),
      );
  });

  it('once revoked, its tuple is gone: check false, Enforced=False Revoked', async () => {
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await resources.createGrant(aclNamespace, spec);
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);

    await resources.revoke(aclNamespace, name);
    const revoked = await resources.waitForReason(aclNamespace, name, EnforcedReason.Revoked);

    expect(revoked.status).toMatchObject({ state: 'DELETED', relationships: 0 });
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, revoked)).toBe(false);
    expect(await relationshipsOn(spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });

  it('stops checking true at its expiryTime and turns Expired', async () => {
    const item = await resources.createItem();
    const expiresAt = new Date(Date.now() + 4_000);
    const spec = individual(item.spec.itemId, ['api'], { expiryTime: expiresAt.toISOString() });
    const { name } = await resources.createGrant(aclNamespace, spec);
    const enforced = await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, enforced)).toBe(true);

    const expired = await resources.waitForReason(aclNamespace, name, EnforcedReason.Expired, 15_000);
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
    expect(expired.status).toMatchObject({ state: 'EXPIRED', relationships: 0 });
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, expired)).toBe(false);
    expect(await relationshipsOn(spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });

  it('leaves nothing behind when the CR is deleted: the finalizer removes its tuples, then itself', async () => {
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await resources.createGrant(aclNamespace, spec);
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);

    await resources.deleteGrant(aclNamespace, name);
    await expect.poll(() => resources.grantExists(aclNamespace, name), { timeout: 15_000 }).toBe(false);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(false);
    expect(await relationshipsOn(spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });
});

describe('a GROUP grant', () => {
  it('gives the members of an allowed organisation access, and nobody else', async () => {
    const item = await resources.createItem();
    const [allowedOrg, otherOrg] = [randomUUID(), randomUUID()];
    const [member, outsider, otherMember] = [randomUUID(), randomUUID(), randomUUID()];
    await addMember(spicedb.client, allowedOrg, member);
    await addMember(spicedb.client, otherOrg, otherMember);
    const { name } = await resources.createGrant(aclNamespace, group(item.spec.itemId, [allowedOrg]));
    const grant = await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);

    const token = grant;
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', member, token)).toBe(true);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', outsider, token)).toBe(false);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', otherMember, token)).toBe(false);
  });
});

describe('the GitOps guard', () => {
  it('does not enforce a grant in a namespace bound to no organisation: NotAuthorized, no tuples', async () => {
    const item = await resources.createItem();
    const unbound = await resources.namespace('gitops-unbound');
    const spec = individual(item.spec.itemId);
    const { name } = await resources.createGrant(unbound, spec);
    const grant = await resources.waitForReason(unbound, name, EnforcedReason.NotAuthorized);

    expect(enforcedCondition(grant)?.message).toContain(`not bound to an organisation`);
    expect(grant.status?.relationships).toBe(0);
    expect(await relationshipsOn(spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
    await expect
      .poll(() => resources.listEvents(unbound))
      .toContainEqual(expect.objectContaining({ reason: 'NotAuthorized' }));
  });

  it("enforces a grant in a namespace bound to the item's organisation, not in one bound to another", async () => {
    const item = await resources.createItem();
    const bound = await resources.namespace('gitops-bound', {
      [ORGANISATION_LABEL]: item.spec.organisationId,
    });
    const elsewhere = await resources.namespace('gitops-other', { [ORGANISATION_LABEL]: randomUUID() });
    const good = await resources.createGrant(bound, individual(item.spec.itemId));
    const bad = await resources.createGrant(elsewhere, individual(item.spec.itemId));

    const enforced = await resources.waitForReason(bound, good.name, EnforcedReason.Projected);
    await resources.waitForReason(elsewhere, bad.name, EnforcedReason.NotAuthorized);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', good.spec.userId, enforced)).toBe(
      true,
    );
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', bad.spec.userId, enforced)).toBe(
      false,
    );
  });

  it('follows namespace labels: binding enforces the grant, unbinding withdraws it', async () => {
    const item = await resources.createItem();
    const namespace = await resources.namespace('gitops-relabel');
    const spec = individual(item.spec.itemId);
    const { name } = await resources.createGrant(namespace, spec);
    await resources.waitForReason(namespace, name, EnforcedReason.NotAuthorized);

    await resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: item.spec.organisationId });
    const enforced = await resources.waitForReason(namespace, name, EnforcedReason.Projected);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, enforced)).toBe(true);

    await resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: null });
    const withdrawn = await resources.waitForReason(namespace, name, EnforcedReason.NotAuthorized);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, withdrawn)).toBe(
      false,
    );
  });
});

describe('the CatalogItem a grant names', () => {
  it('must exist: ItemNotFound until it is created, then the grant is enforced', async () => {
    const itemId = `urn:dx:item:${randomUUID()}`;
    const { name } = await resources.createGrant(aclNamespace, individual(itemId));
    const missing = await resources.waitForReason(aclNamespace, name, EnforcedReason.ItemNotFound);
    expect(enforcedCondition(missing)?.message).toBe(`no CatalogItem has itemId "${itemId}"`);

    await resources.createItem({ itemId });
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
  });

  it('must be unambiguous: a second CatalogItem with the same itemId withdraws the grant and the owners', async () => {
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await resources.createGrant(aclNamespace, spec);
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
    await expect
      .poll(async () =>
        (await relationshipsOn(spicedb.client, item.spec.itemId)).filter((r) => r.relation === 'owner'),
      )
      .toHaveLength(2);

    const twin = await resources.createItem({ itemId: item.spec.itemId });
    const ambiguous = await resources.waitForReason(aclNamespace, name, EnforcedReason.ItemNotFound);
    expect(enforcedCondition(ambiguous)?.message).toContain('ambiguous');
    await expect.poll(() => relationshipsOn(spicedb.client, item.spec.itemId)).toEqual([]);

    await resources.deleteItem(twin.name);
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
  });

  it('must allow the access types: AccessTypeNotAllowed otherwise, enforced once the item allows them', async () => {
    const item = await resources.createItem({ accessTypes: ['file'] });
    const { name } = await resources.createGrant(aclNamespace, individual(item.spec.itemId, ['api']));
    const refused = await resources.waitForReason(aclNamespace, name, 'AccessTypeNotAllowed');
    expect(enforcedCondition(refused)?.message).toContain('does not allow access type "api"');
    expect(refused.status?.relationships).toBe(0);

    await resources.updateItemSpec(item.name, { accessTypes: ['file', 'api'] });
    await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
  });

  it('projects its owner and organisation as owner relationships', async () => {
    const item = await resources.createItem();
    await expect
      .poll(async () =>
        (await relationshipsOn(spicedb.client, item.spec.itemId))
          .map((r) => `${r.relation}@${r.subject.type}:${r.subject.id}`)
          .sort(),
      )
      .toEqual([`owner@organization:${item.spec.organisationId}`, `owner@user:${item.spec.ownerId}`]);

    const newOwner = randomUUID();
    await resources.updateItemSpec(item.name, { ownerId: newOwner });
    await expect
      .poll(async () =>
        (await relationshipsOn(spicedb.client, item.spec.itemId)).map((r) => r.subject.id).sort(),
      )
      .toEqual([item.spec.organisationId, newOwner].sort());

    await resources.deleteItem(item.name);
    await expect.poll(() => relationshipsOn(spicedb.client, item.spec.itemId)).toEqual([]);
  });
});

describe('overlapping grants', () => {
  it('gives Conflict to the newer of two active grants for the same user, item and access type', async () => {
    const item = await resources.createItem();
    const spec = individual(item.spec.itemId);
    const older = await resources.createGrant(aclNamespace, spec);
    await resources.waitForReason(aclNamespace, older.name, EnforcedReason.Projected);
    await new Promise((resolve) => setTimeout(resolve, 1_100)); // creationTimestamp has whole seconds
    const newer = await resources.createGrant(aclNamespace, spec);

    const conflicting = await resources.waitForReason(aclNamespace, newer.name, EnforcedReason.Conflict);
    expect(enforcedCondition(conflicting)?.message).toContain(older.name);
    expect(conflicting.status?.relationships).toBe(0);
    // The loser's withdrawal must not take the winner's tuple.
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(true);

    await resources.revoke(aclNamespace, older.name);
    const takenOver = await resources.waitForReason(aclNamespace, newer.name, EnforcedReason.Projected);
    await resources.waitForReason(aclNamespace, older.name, EnforcedReason.Revoked);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, takenOver)).toBe(
      true,
    );
  });

  it('keeps a tuple that another grant still needs when one of them is revoked', async () => {
    const item = await resources.createItem();
    const [orgA, orgB, member] = [randomUUID(), randomUUID(), randomUUID()];
    await addMember(spicedb.client, orgA, member);
    // Revoked first, then a new grant for the same access: the ACL API's "revoke and grant again".
    const first = await resources.createGrant(aclNamespace, group(item.spec.itemId, [orgA]));
    await resources.waitForReason(aclNamespace, first.name, EnforcedReason.Projected);
    await resources.revoke(aclNamespace, first.name);
    const second = await resources.createGrant(aclNamespace, group(item.spec.itemId, [orgA, orgB]));

    await resources.waitForReason(aclNamespace, first.name, EnforcedReason.Revoked);
    const enforced = await resources.waitForReason(aclNamespace, second.name, EnforcedReason.Projected);
    expect(await userCan(spicedb.client, item.spec.itemId, 'api_consumer', member, enforced)).toBe(true);
  });
});

describe('status', () => {
  it('is written once per change: no write while nothing changes', async () => {
    const item = await resources.createItem();
    const { name } = await resources.createGrant(aclNamespace, individual(item.spec.itemId));
    const enforced = await resources.waitForReason(aclNamespace, name, EnforcedReason.Projected);
    await new Promise((resolve) => setTimeout(resolve, 4_000)); // more than a resync period
    const later = await resources.getGrant(aclNamespace, name);
    expect(later.metadata.resourceVersion).toBe(enforced.metadata.resourceVersion);
  });
});

describe('operational endpoints', () => {
  it('reports readiness with leadership, and the domain metrics', async () => {
    const ready = await fetch(`${controller.url}/healthz/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ leader: true, results: expect.any(Array) });
    expect((await fetch(`${controller.url}/healthz/live`)).status).toBe(200);
    const metrics = await (await fetch(`${controller.url}/metrics`)).text();
    for (const sample of [
      /^policygrant_enforcement_latency_seconds_count{transition="enforced"} [1-9]/m,
      /^policygrant_enforcement_latency_seconds_count{transition="revoked"} [1-9]/m,
      /^policygrant_enforcement_latency_seconds_count{transition="expired"} [1-9]/m,
      /^policygrant_unenforced_grants \d+$/m,
      /^policygrant_projection_failed_grants 0$/m,
      /^policygrant_drift_repaired_total{direction="orphan"} \d+$/m,
      /^controller_runtime_reconcile_total{.*controller="policygrant".*} [1-9]/m,
      /^workqueue_depth{.*name="policygrant".*} \d+$/m,
      /^leader_election_master_status{name="controller-lifecycle-[0-9a-f]+"} 1$/m,
    ]) {
      expect(metrics).toMatch(sample);
    }
  });
});
