import { describe, expect, it } from 'vitest';
import { EnforcedReason, RELATIONSHIPS_FINALIZER } from '../../../src/api/v1alpha1/index.js';
import { ACL_API_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import { KubeClient } from '../../../src/kube/kube-client.js';
import { GrantStore } from '../../../src/acl/policies/grant-store.js';
import { CONTROLLER_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';
import { projectGrant } from '../../../src/verdict/projection.js';
import { until } from '../../../dev/wait/until.js';
import { testKubeConfig } from '../support/cluster.js';
import {
  individual,
  relationshipsOn,
  SCOPE_LABEL,
  startTestController,
  userCan,
  useControllerFixture,
  waitUntilLeading,
} from './support/harness.js';

// Grants the ACL API creates carry the controller's finalizer from birth (its GrantStore against the real
// kube-apiserver, the controller in process, SpiceDB of its own): the controller patches no finalizer, and a
// grant deleted before the controller ever reconciled it still has its tuples withdrawn and is released.

const fixture = useControllerFixture('born');

function aclStore(): GrantStore {
  // As the ACL API writes: under its field manager.
  const kube = new KubeClient(testKubeConfig(), { fieldManager: ACL_API_FIELD_MANAGER });
  return new GrantStore(kube, fixture.aclNamespace);
}

function createThroughStore(store: GrantStore, itemId: string) {
  const spec = individual(itemId);
  const name = `born-${spec.userId}`;
  const labels = { [SCOPE_LABEL]: fixture.resources.scope };
  return { spec, name, created: store.createGrant({ name, labels, annotations: {}, spec }) };
}

describe('a grant the ACL API creates', () => {
  it('carries the finalizer from creation and is enforced without a finalizer patch by the controller', async () => {
    const item = await fixture.resources.createItem();
    const { spec, name, created } = createThroughStore(aclStore(), item.spec.itemId);
    expect((await created).metadata.finalizers).toEqual([RELATIONSHIPS_FINALIZER]);

    const grant = await fixture.resources.waitForReason(fixture.aclNamespace, name, EnforcedReason.Projected);
    expect(await userCan(fixture.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, grant)).toBe(
      true,
    );
    const controllerWrites = (grant.metadata.managedFields ?? []).filter(
      (entry) => entry.manager === CONTROLLER_FIELD_MANAGER,
    );
    expect(controllerWrites.map((entry) => entry.subresource)).toEqual(['status']);
  });

  it('deleted before the controller reconciled it (tuples of a leader that died before the status): tuples gone, released', async () => {
    const item = await fixture.resources.createItem();
    const store = aclStore();
    await fixture.controller.stop();

    const { spec, name, created } = createThroughStore(store, item.spec.itemId);
    await created;
    const { relationships } = projectGrant(spec, loadRegistry());
    await fixture.spicedb.client.writeRelationshipsInBatches(
      relationships.map((relationship) => ({ operation: 'touch', relationship })),
    );
    await fixture.resources.deleteGrant(fixture.aclNamespace, name);
    expect(await fixture.resources.grantExists(fixture.aclNamespace, name)).toBe(true); // held by the finalizer

    // A rollback of the ACL API releases a grant the controller has not written to: gone at once.
    const rolledBack = createThroughStore(store, item.spec.itemId);
    await store.deleteGrant(rolledBack.name, (await rolledBack.created).metadata.uid ?? '');
    expect(await fixture.resources.grantExists(fixture.aclNamespace, rolledBack.name)).toBe(false);

    fixture.controller = await startTestController({
      spicedb: fixture.spicedb.server,
      aclNamespace: fixture.aclNamespace,
      scope: fixture.resources.scope,
      logFile: `${fixture.stateDir}/controller-restarted.log`,
    });
    await waitUntilLeading(fixture.controller);
    await until(
      async () => !(await fixture.resources.grantExists(fixture.aclNamespace, name)),
      'the deleted grant to be released',
    );
    const left = await relationshipsOn(fixture.spicedb.client, item.spec.itemId);
    expect(left.filter((relationship) => relationship.relation !== 'owner')).toEqual([]);
  });
});
