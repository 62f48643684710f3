import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnforcedReason, RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import { POLL_TIMEOUT_MS } from '../../../dev/wait/until.js';
import { SHORT_LIFETIME_MS } from '../../support/timeouts.js';
import {
  enforcedCondition,
  freshResync,
  group,
  individual,
  metricValue,
  relationshipsOn,
  userCan,
  useControllerFixture,
} from './support/harness.js';
import { sleep } from '../../../dev/wait/sleep.js';

// The life of a grant, end to end: kube-apiserver (shared) → controller (in process) → SpiceDB (its own).

const fixture = useControllerFixture('lifecycle');

/** How many grants reached `transition` (enforced, revoked, expired) by the controller's own count. */
// Observed once the controller has the status write's answer, which a reader of the grant may see first: poll.
const transitions = (transition: string) =>
  metricValue(fixture.controller, 'policygrant_enforcement_latency_seconds_count', { transition });

describe('an INDIVIDUAL grant', () => {
  it('is enforced: Enforced=True, the tuple checks true at the status ZedToken, and an Event says so', async () => {
    const item = await fixture.resources.createItem();
    const spec = individual(item.spec.itemId, ['api', 'file']);
    const enforcedBefore = await transitions('enforced');
    const created = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    const grant = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      created.name,
      EnforcedReason.Projected,
    );

    expect(enforcedCondition(grant)).toMatchObject({
      status: 'True',
      observedGeneration: grant.metadata.generation,
    });
    expect(grant.status).toMatchObject({ state: 'ACTIVE', relationships: 2, zedToken: expect.any(String) });
    expect(grant.metadata.finalizers).toContain(RELATIONSHIPS_FINALIZER);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, grant)).toBe(
      true,
    );
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'file_consumer', spec.userId, grant)).toBe(
      true,
    );
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'sub_consumer', spec.userId, grant)).toBe(
      false,
    );
    const tuple = (await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).find(
      (r) => r.relation === 'api_consumer',
    );
    expect(tuple?.expiresAt?.toISOString()).toBe(new Date(spec.expiryTime).toISOString());
    await expect.poll(() => transitions('enforced')).toBeGreaterThan(enforcedBefore);
    // Events are written after the status, without waiting.
    await expect
      .poll(() => fixture.resources.listEvents(fixture.aclNamespace))
      .toContainEqual(
        expect.objectContaining({
          reason: 'Projected',
          regarding: expect.objectContaining({ name: created.name }),
        }),
      );
  });

  it('once revoked, its tuple is gone: check false, Enforced=False Revoked', async () => {
    const item = await fixture.resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    const revokedBefore = await transitions('revoked');

    await fixture.resources.revoke(fixture.aclNamespace, name);
    const revoked = await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Revoked);
    await expect.poll(() => transitions('revoked')).toBeGreaterThan(revokedBefore);

    expect(revoked.status).toMatchObject({ state: 'DELETED', relationships: 0 });
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, revoked),
    ).toBe(false);
    expect(await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });

  it('stops checking true at its expiryTime and turns Expired', async () => {
    const item = await fixture.resources.createItem();
    const expiresAt = new Date(Date.now() + SHORT_LIFETIME_MS);
    const spec = individual(item.spec.itemId, ['api'], { expiryTime: expiresAt.toISOString() });
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    const enforced = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.Projected,
    );
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, enforced),
    ).toBe(true);
    const expiredBefore = await transitions('expired');

    const expired = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.Expired,
      SHORT_LIFETIME_MS + POLL_TIMEOUT_MS,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt.getTime());
    await expect.poll(() => transitions('expired')).toBeGreaterThan(expiredBefore);
    expect(expired.status).toMatchObject({ state: 'EXPIRED', relationships: 0 });
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, expired),
    ).toBe(false);
    expect(await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });

  it('leaves nothing behind when the CR is deleted: the finalizer removes its tuples, then itself', async () => {
    const item = await fixture.resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);

    await fixture.resources.deleteGrant(fixture.aclNamespace, name);
    await expect.poll(() => fixture.resources.grantExists(fixture.aclNamespace, name)).toBe(false);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(false);
    expect(await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
  });
});

describe('a GROUP grant', () => {
  it('gives the members of an allowed organisation access, and nobody else', async () => {
    const item = await fixture.resources.createItem();
    const [allowedOrg, otherOrg] = [randomUUID(), randomUUID()];
    const [member, outsider, otherMember] = [randomUUID(), randomUUID(), randomUUID()];
    await fixture.resources.addMember(fixture.aclNamespace, allowedOrg, member);
    await fixture.resources.addMember(fixture.aclNamespace, otherOrg, otherMember);
    const { name } = await fixture.resources.createGrant(
      fixture.aclNamespace,
      group(item.spec.itemId, [allowedOrg]),
    );
    const grant = await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);

    const token = grant;
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', member, token)).toBe(true);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', outsider, token)).toBe(
      false,
    );
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', otherMember, token)).toBe(
      false,
    );
  });
});

describe('namespace authorisation of a grant applied with kubectl', () => {
  it('does not enforce a grant in a namespace bound to no organisation: NotAuthorized, no tuples', async () => {
    const item = await fixture.resources.createItem();
    const unbound = await fixture.resources.namespace('gitops-unbound');
    const spec = individual(item.spec.itemId);
    const { name } = await fixture.resources.createGrant(unbound, spec);
    const grant = await fixture.resources.waitForReason(unbound, name, EnforcedReason.NotAuthorized);

    expect(enforcedCondition(grant)?.message).toContain(`not bound to an organisation`);
    expect(grant.status?.relationships).toBe(0);
    expect(await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).not.toContainEqual(
      expect.objectContaining({ relation: 'api_consumer' }),
    );
    await expect
      .poll(() => fixture.resources.listEvents(unbound))
      .toContainEqual(expect.objectContaining({ reason: 'NotAuthorized' }));
  });

  it("enforces a grant in a namespace bound to the item's organisation, not in one bound to another", async () => {
    const item = await fixture.resources.createItem();
    const bound = await fixture.resources.namespace('gitops-bound', {
      [ORGANISATION_LABEL]: item.spec.organisationId,
    });
    const elsewhere = await fixture.resources.namespace('gitops-other', {
      [ORGANISATION_LABEL]: randomUUID(),
    });
    const good = await fixture.resources.createGrant(bound, individual(item.spec.itemId));
    const bad = await fixture.resources.createGrant(elsewhere, individual(item.spec.itemId));

    const enforced = await fixture.resources.waitForReason(bound, good.name, EnforcedReason.Projected);
    await fixture.resources.waitForReason(elsewhere, bad.name, EnforcedReason.NotAuthorized);
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', good.spec.userId, enforced),
    ).toBe(true);
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', bad.spec.userId, enforced),
    ).toBe(false);
  });

  it('follows namespace labels: binding enforces the grant, unbinding withdraws it', async () => {
    const item = await fixture.resources.createItem();
    const namespace = await fixture.resources.namespace('gitops-relabel');
    const spec = individual(item.spec.itemId);
    const { name } = await fixture.resources.createGrant(namespace, spec);
    await fixture.resources.waitForReason(namespace, name, EnforcedReason.NotAuthorized);

    await fixture.resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: item.spec.organisationId });
    const enforced = await fixture.resources.waitForReason(namespace, name, EnforcedReason.Projected);
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, enforced),
    ).toBe(true);

    await fixture.resources.labelNamespace(namespace, { [ORGANISATION_LABEL]: null });
    const withdrawn = await fixture.resources.waitForReason(namespace, name, EnforcedReason.NotAuthorized);
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, withdrawn),
    ).toBe(false);
  });
});

describe('the CatalogItem a grant names', () => {
  it('must exist: ItemNotFound until it is created, then the grant is enforced', async () => {
    const itemId = `urn:dx:item:${randomUUID()}`;
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, individual(itemId));
    const missing = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.ItemNotFound,
    );
    expect(enforcedCondition(missing)?.message).toBe(`no CatalogItem has itemId "${itemId}"`);

    await fixture.resources.createItem({ itemId });
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
  });

  it('must be unambiguous: a second CatalogItem with the same itemId withdraws the grant and the owners', async () => {
    const item = await fixture.resources.createItem();
    const spec = individual(item.spec.itemId);
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).filter(
          (r) => r.relation === 'owner',
        ),
      )
      .toHaveLength(2);

    const twin = await fixture.resources.createItem({ itemId: item.spec.itemId });
    const ambiguous = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.ItemNotFound,
    );
    expect(enforcedCondition(ambiguous)?.message).toContain('ambiguous');
    await expect.poll(() => relationshipsOn(fixture.spicedb.client, item.spec.itemId)).toEqual([]);

    await fixture.resources.deleteItem(twin.name);
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
  });

  it('must allow the access types: AccessTypeNotAllowed otherwise, enforced once the item allows them', async () => {
    const item = await fixture.resources.createItem({ accessTypes: ['file'] });
    const { name } = await fixture.resources.createGrant(
      fixture.aclNamespace,
      individual(item.spec.itemId, ['api']),
    );
    const refused = await fixture.resources.waitForReason(fixture.aclNamespace, name, 'AccessTypeNotAllowed');
    expect(enforcedCondition(refused)?.message).toContain('does not allow access type "api"');
    expect(refused.status?.relationships).toBe(0);

    await fixture.resources.updateItemSpec(item.name, { accessTypes: ['file', 'api'] });
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
  });

  it('projects its owner and organisation as owner relationships', async () => {
    const item = await fixture.resources.createItem();
    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId))
          .map((r) => `${r.relation}@${r.subject.type}:${r.subject.id}`)
          .sort(),
      )
      .toEqual([`owner@organization:${item.spec.organisationId}`, `owner@user:${item.spec.ownerId}`]);

    const newOwner = randomUUID();
    await fixture.resources.updateItemSpec(item.name, { ownerId: newOwner });
    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).map((r) => r.subject.id).sort(),
      )
      .toEqual([item.spec.organisationId, newOwner].sort());

    await fixture.resources.deleteItem(item.name);
    await expect.poll(() => relationshipsOn(fixture.spicedb.client, item.spec.itemId)).toEqual([]);
  });
});

describe('overlapping grants', () => {
  it('gives Conflict to the newer of two active grants for the same user, item and access type', async () => {
    const item = await fixture.resources.createItem();
    const spec = individual(item.spec.itemId);
    const older = await fixture.resources.createGrant(fixture.aclNamespace, spec);
    await fixture.resources.waitForReason(fixture.aclNamespace, older.name, EnforcedReason.Projected);
    await sleep(1_100); // creationTimestamp has whole seconds
    const newer = await fixture.resources.createGrant(fixture.aclNamespace, spec);

    const conflicting = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      newer.name,
      EnforcedReason.Conflict,
    );
    expect(enforcedCondition(conflicting)?.message).toContain(older.name);
    expect(conflicting.status?.relationships).toBe(0);
    // The loser's withdrawal must not take the winner's tuple.
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId)).toBe(true);

    await fixture.resources.revoke(fixture.aclNamespace, older.name);
    const takenOver = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      newer.name,
      EnforcedReason.Projected,
    );
    await fixture.resources.waitForReason(fixture.aclNamespace, older.name, EnforcedReason.Revoked);
    expect(
      await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, takenOver),
    ).toBe(true);
  });

  it('keeps a tuple that another grant still needs when one of them is revoked', async () => {
    const item = await fixture.resources.createItem();
    const [orgA, orgB, member] = [randomUUID(), randomUUID(), randomUUID()];
    await fixture.resources.addMember(fixture.aclNamespace, orgA, member);
    // Revoked first, then a new grant for the same access: the ACL API's "revoke and grant again".
    const first = await fixture.resources.createGrant(fixture.aclNamespace, group(item.spec.itemId, [orgA]));
    await fixture.resources.waitForReason(fixture.aclNamespace, first.name, EnforcedReason.Projected);
    await fixture.resources.revoke(fixture.aclNamespace, first.name);
    const second = await fixture.resources.createGrant(
      fixture.aclNamespace,
      group(item.spec.itemId, [orgA, orgB]),
    );

    await fixture.resources.waitForReason(fixture.aclNamespace, first.name, EnforcedReason.Revoked);
    const enforced = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      second.name,
      EnforcedReason.Projected,
    );
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', member, enforced)).toBe(
      true,
    );
  });
});

describe('status', () => {
  it('is written once per change: not again when the grant is reconciled or resynced with nothing changed', async () => {
    const item = await fixture.resources.createItem();
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, individual(item.spec.itemId));
    const enforced = await fixture.resources.waitForReason(
      fixture.aclNamespace,
      name,
      EnforcedReason.Projected,
    );
    const reconciles = () =>
      metricValue(fixture.controller, 'controller_runtime_reconcile_total', { controller: 'policygrant' });
    const reconciledBefore = await reconciles();

    // A change of its item's owner reconciles the grant (an item's grants are queued with it) and changes
    // nothing the grant's status says; the owner relationship shows that the change was handled.
    const newOwner = randomUUID();
    await fixture.resources.updateItemSpec(item.name, { ownerId: newOwner });
    await expect
      .poll(async () =>
        (await relationshipsOn(fixture.spicedb.client, item.spec.itemId)).map((r) => r.subject.id),
      )
      .toContain(newOwner);
    await expect.poll(reconciles).toBeGreaterThan(reconciledBefore);
    await freshResync(fixture.controller);

    const later = await fixture.resources.getGrant(fixture.aclNamespace, name);
    expect(later.metadata.resourceVersion).toBe(enforced.metadata.resourceVersion);
  });
});

describe('operational endpoints', () => {
  it('reports readiness with leadership, and the domain metrics', async () => {
    const item = await fixture.resources.createItem();
    const { name } = await fixture.resources.createGrant(fixture.aclNamespace, individual(item.spec.itemId));
    await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    const ready = await fetch(`${fixture.controller.url}/healthz/ready`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ leader: true, results: expect.any(Array) });
    expect((await fetch(`${fixture.controller.url}/healthz/live`)).status).toBe(200);
    const metrics = await (await fetch(`${fixture.controller.url}/metrics`)).text();
    for (const sample of [
      /^policygrant_enforcement_latency_seconds_count{transition="enforced"} [1-9]/m,
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
