import type { AclServices } from '../acl-routes.js';
import type { AclDeps } from '../acl-deps.js';
import { MemberEventApplier } from './member-events.js';
import { MemberSnapshots } from './member-snapshot.js';
import { MembershipStore } from './membership-store.js';

/** The memberships' part of the ACL API: member events applied, snapshots reconciled. */
export function setupMemberships(deps: AclDeps): AclServices['memberships'] {
  const { config, kube, cache, now, metricsRegistry } = deps;
  const memberships = new MembershipStore(kube, cache, config.namespace);
  return {
    applier: new MemberEventApplier(memberships, metricsRegistry),
    snapshots: new MemberSnapshots(memberships, cache, now),
  };
}
