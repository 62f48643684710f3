import type { Membership } from '../../api/v1alpha1/index.js';
import type { ObjectStore } from '../cluster-world.js';
import { ProjectedWorld } from '../projected/projected-world.js';
import { membershipKind } from './membership-projection.js';

/** The controller's view of the Memberships of the ACL namespace (the only ones that count). */
export class MembershipWorld extends ProjectedWorld<Membership> {
  constructor(memberships: ObjectStore<Membership>) {
    super(memberships, membershipKind);
  }
}
