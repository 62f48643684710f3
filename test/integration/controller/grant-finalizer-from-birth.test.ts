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

const world = useControllerFixture('born');

function aclStore(): GrantStore {
  // As the ACL API writes: under its field manager.
  const kube = new KubeClient(testKubeConfig(), { fieldManager: ACL_API_FIELD_MANAGER });
  return new GrantStore(kube, world.aclNamespace);
}

function createThroughStore(store: GrantStore, itemId: string) {
  const spec = individual(itemId);
  const name = `born-${spec.userId}`;
  const labels = { [SCOPE_LABEL]: world.resources.scope };
  return { spec, name, created: store.createGrant({ name, labels, annotations: {}, spec }) };
}

describe('a grant the ACL API creates', () => {
  it('carries the finalizer from creation and is enforced without a finalizer patch by the controller', async () => {
    const item = await world.resources.createItem();
    const { spec, name, created } = createThroughStore(aclStore(), item.spec.itemId);
    expect((await created).metadata.finalizers).toEqual([RELATIONSHIPS_FINALIZER]);

    const grant = await world.resources.waitForReason(world.aclNamespace, name, EnforcedReason.Projected);
    expect(await userCan(world.spicedb.client, item.spec.itemId, 'api_consumer', spec.userId, grant)).toBe(
      true,
    );
    const controllerWrites = (grant.metadata.managedFields ?? []).filter(
      (entry) => entry.manager === CONTROLLER_FIELD_MANAGER,
    );
    expect(controllerWrites.map((entry) => entry.subresource)).toEqual(['status']);
  });

  it('deleted before the controller reconciled it (tuples of a leader that died before the status): tuples gone, released', async () => {
    const item = await world.resources.createItem();
    const store = aclStore();
    await world.controller.stop();

    const { spec, name, created } = createThroughStore(store, item.spec.itemId);
    await created;
    const { relationships } = projectGrant(spec, loadRegistry());
    await world.spicedb.client.writeRelationshipsInBatches(
      relationships.map((relationship) => ({ operation: 'touch', relationship })),
    );
    await world.resources.deleteGrant(world.aclNamespace, name);
    expect(await world.resources.grantExists(world.aclNamespace, name)).toBe(true); // held by the finalizer

    // A rollback of the ACL API releases a grant the controller has not written to: gone at once.
    const rolledBack = createThroughStore(store, item.spec.itemId);
    await store.deleteGrant(rolledBack.name, (await rolledBack.created).metadata.uid ?? '');
    expect(await world.resources.grantExists(world.aclNamespace, rolledBack.name)).toBe(false);

    world.controller = await startTestController({
      spicedb: world.spicedb.server,
      aclNamespace: world.aclNamespace,
      scope: world.resources.scope,
      logFile: `${world.stateDir}/controller-restarted.log`,
    });
    await waitUntilLeading(world.controller);
    await until(
      async () => !(await world.resources.grantExists(world.aclNamespace, name)),
      'the deleted grant to be released',
    );
    const left = await relationshipsOn(world.spicedb.client, item.spec.itemId);
    expect(left.filter((relationship) => relationship.relation !== 'owner')).toEqual([]);
  });
});
