import type { Membership } from '../../api/v1alpha1/index.js';
import type { Controller, Manager } from '../../runtime/index.js';
import { membershipsPath } from '../controller-caches.js';
import type { ControllerDeps } from '../controller-deps.js';
import { ProjectedWriter } from '../projected/projected-writer.js';
import { setupProjectedController } from '../projected/setup-projected-controller.js';

/**
 * The Membership controller: the ACL namespace's Memberships projected onto organisation and group members
 * (membership-projection.ts), through the generic projected machinery.
 */
export function setupMembershipController(manager: Manager, deps: ControllerDeps): Controller<Membership> {
  const { caches } = deps;
  return setupProjectedController(manager, deps, {
    cache: caches.membershipCache,
    world: caches.memberships,
    writer: new ProjectedWriter<Membership>(deps.kubeConfig, membershipsPath),
    rewriteOnRecovery: true,
  });
}
