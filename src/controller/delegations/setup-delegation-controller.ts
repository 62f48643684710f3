import { DELEGATION_RESOURCE, type Delegation } from '../../api/v1alpha1/index.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import { objectKey, watchesMapped, type Controller, type Manager } from '../../runtime/index.js';
import { BY_AGENT_ID } from '../controller-caches.js';
import { RELATIONSHIPS_WRITES, type ControllerDeps } from '../controller-deps.js';
import { setupProjectedController } from '../projected/setup-projected-controller.js';

/**
 * The Delegation controller: the ACL namespace's Delegations projected onto agent relationships
 * (delegation-projection.ts), through the shared projected machinery. A delegation counts only for the owner
 * its Agent object names, so Agent changes trigger it too.
 */
export function setupDelegationController(manager: Manager, deps: ControllerDeps): Controller<Delegation> {
  const { agentCache, delegationCache, delegations } = deps.caches;
  return setupProjectedController(manager, deps, {
    kind: delegations,
    cache: delegationCache,
    writer: new ObjectWriter<Delegation>(deps.kube, DELEGATION_RESOURCE, RELATIONSHIPS_WRITES),
    // An Agent object appeared or names another owner: its delegations count, or stop counting.
    watches: [
      watchesMapped(agentCache, (agent) =>
        delegationCache.byIndex(BY_AGENT_ID, agent.spec.agentId).map((delegation) => objectKey(delegation)),
      ),
    ],
    rewriteOnRecovery: false,
  });
}
