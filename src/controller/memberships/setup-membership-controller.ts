import { MEMBERSHIP_RESOURCE, type Membership } from '../../api/v1alpha1/index.js';
import { ObjectWriter } from '../../kube/object-writer.js';
import type { Controller, Manager } from '../../runtime/index.js';
import { RELATIONSHIPS_WRITES, type ControllerDeps } from '../controller-deps.js';
import { setupProjectedController } from '../projected/setup-projected-controller.js';

/**
 * The Membership controller: the ACL namespace's Memberships projected onto organisation and group members
 * (membership-projection.ts), through the shared projected machinery.
 */
export function setupMembershipController(manager: Manager, deps: ControllerDeps): Controller<Membership> {
  const { caches } = deps;
  return setupProjectedController(manager, deps, {
    kind: caches.memberships,
    cache: caches.membershipCache,
    writer: new ObjectWriter<Membership>(deps.kube, MEMBERSHIP_RESOURCE, RELATIONSHIPS_WRITES),
    rewriteOnRecovery: true,
  });
}
