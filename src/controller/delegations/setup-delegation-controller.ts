import type { Delegation } from '../../api/v1alpha1/index.js';
import { objectKey, watchesMapped, type Controller, type Manager } from '../../runtime/index.js';
import { BY_AGENT_ID } from '../controller-caches.js';
import type { ControllerDeps } from '../controller-deps.js';
import { setupProjectedController } from '../projected/setup-projected-controller.js';
import { DelegationWriter } from './delegation-writer.js';

/**
 * The Delegation controller: the ACL namespace's Delegations projected onto agent relationships
 * (delegation-projection.ts), through the generic projected machinery. A delegation counts only for the owner
 * its Agent object names, so Agent changes trigger it too.
 */
export function setupDelegationController(manager: Manager, deps: ControllerDeps): Controller<Delegation> {
  const { agentCache, delegationCache, delegations } = deps.caches;
  return setupProjectedController(manager, deps, {
    cache: delegationCache,
    world: delegations,
    writer: new DelegationWriter(deps.kubeConfig),
    // An Agent object appeared or names another owner: its delegations count, or stop counting.
    watches: [
      watchesMapped(agentCache, (agent) =>
        delegationCache.byIndex(BY_AGENT_ID, agent.spec.agentId).map((delegation) => objectKey(delegation)),
      ),
    ],
    rewriteOnRecovery: false,
  });
}
