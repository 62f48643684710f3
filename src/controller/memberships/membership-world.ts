import type { Membership } from '../../api/v1alpha1/index.js';
import type { Indexer } from '../../kube/indexes.js';
import { ProjectedView } from '../projected/projected-view.js';
import { membershipKind } from './membership-projection.js';

/** The controller's view of the Memberships of the ACL namespace (the only ones that count). */
export class MembershipWorld extends ProjectedView<Membership> {
  constructor(memberships: Indexer<Membership>) {
    super(memberships, membershipKind);
  }
}
