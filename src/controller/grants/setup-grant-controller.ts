import type { KubernetesObject } from '@kubernetes/client-node';
import { POLICY_GRANT_RESOURCE, type CatalogItem, type PolicyGrant } from '../../api/v1alpha1/index.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import { watchesMapped, type Controller, type Informer, type Manager } from '../../runtime/index.js';
import { grantKey } from '../../verdict/grant-verdict.js';
import { candidateTupleKeys } from '../../verdict/projection.js';
import type { ClusterView } from '../cluster-view.js';
import { RELATIONSHIPS_WRITES, type ControllerDeps } from '../controller-deps.js';
import { setupProjectedController } from '../projected/setup-projected-controller.js';
import { GrantKind } from './grant-kind.js';

/**
 * The PolicyGrant controller: projects each grant onto SpiceDB and writes its status, through the shared
 * projected machinery (grant-kind.ts holds what is the grants' own). With the audit, a deleted grant's
 * finalizer goes once its deletion is recorded.
 */
export function setupGrantController(manager: Manager, deps: ControllerDeps): Controller<PolicyGrant> {
  const { caches, audit } = deps;
  return setupProjectedController(manager, deps, {
    kind: new GrantKind({ ...deps, cluster: caches.cluster }),
    cache: caches.grants,
    writer: new ObjectWriter<PolicyGrant>(deps.kube, POLICY_GRANT_RESOURCE, RELATIONSHIPS_WRITES),
    watches: grantTriggers(caches.cluster, caches.grants, caches.items, caches.namespaces),
    rewriteOnRecovery: true,
    ...(audit ? { beforeRelease: (grant: PolicyGrant) => audit.auditor.record(grant) } : {}),
  });
}

/** What makes a grant worth another look besides its own changes. */
function grantTriggers(
  cluster: ClusterView,
  grants: Informer<PolicyGrant>,
  items: Informer<CatalogItem>,
  namespaces: Informer<KubernetesObject>,
) {
  return [
    // Its CatalogItem appeared, changed (organisation, access types) or became ambiguous.
    watchesMapped(items, (item) => cluster.grantsOnItem(item.spec.itemId).map(grantKey)),
    // Its namespace was bound to an organisation, rebound or unbound.
    watchesMapped(namespaces, (namespace) =>
      cluster.grantsInNamespace(namespace.metadata?.name ?? '').map(grantKey),
    ),
    // A grant it shares a tuple with changed: a conflict may be over, or a shared tuple must stay.
    watchesMapped(grants, (grant) =>
      candidateTupleKeys(grant.spec, cluster.registry).flatMap((key) =>
        cluster.grantsWithTupleKey(key).map(grantKey),
      ),
    ),
  ];
}
