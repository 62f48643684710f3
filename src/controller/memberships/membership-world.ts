import { isMember, type Membership } from '../../api/v1alpha1/index.js';
import { objectKey } from '../../runtime/index.js';
import type { Relationship } from '../../spicedb/client.js';
import type { ObjectStore } from '../cluster-world.js';
import { hasFinalizer } from '../grants/grant-writer.js';
import { tupleKey, type TupleKey } from '../../verdict/tuple-key.js';
import { projectMembership } from './membership-projection.js';

const MEMBERSHIPS_BY_TUPLE = 'tupleKey';

/** The tuples a membership projects when it counts; none when an id cannot be a SpiceDB object id. */
function projectedKeys(membership: Membership): TupleKey[] {
  try {
    return projectMembership(membership.spec).map(tupleKey);
  } catch {
    return [];
  }
}

/**
 * The controller's view of the Memberships of the ACL namespace (the only ones that count), indexed by the
 * tuples they project: which memberships explain a tuple, what the resync wants.
 */
export class MembershipWorld {
  constructor(private readonly memberships: ObjectStore<Membership>) {
    memberships.addIndex(MEMBERSHIPS_BY_TUPLE, projectedKeys);
  }

  membership(key: string): Membership | undefined {
    return this.memberships.get(key);
  }

  allMemberships(): Membership[] {
    return this.memberships.list();
  }

  /** Memberships whose projection includes `key`, members or not. */
  withTupleKey(key: TupleKey): Membership[] {
    return this.memberships.byIndex(MEMBERSHIPS_BY_TUPLE, key);
  }

  /** Every relationship the members want now. */
  wantedRelationships(): Relationship[] {
    return this.allMemberships()
      .filter(isMember)
      .flatMap((membership) => {
        try {
          return projectMembership(membership.spec);
        } catch {
          return [];
        }
      });
  }

  /** The relationship a member other than `except` (a membership key) wants under `key`, if any. */
  explain(key: TupleKey, except?: string): Relationship | undefined {
    return this.explainBy(key, (membership) => objectKey(membership) !== except);
  }

  /**
   * As `explain`, but only for a membership that holds its finalizer: before that nothing guarantees that
   * deleting it removes the tuple again, so its reconcile writes it, finalizer first.
   */
  explainWritable(key: TupleKey): Relationship | undefined {
    return this.explainBy(key, hasFinalizer);
  }

  private explainBy(key: TupleKey, accept: (membership: Membership) => boolean): Relationship | undefined {
    const explaining = this.withTupleKey(key).find(
      (membership) => isMember(membership) && accept(membership),
    );
    return (
      explaining && projectMembership(explaining.spec).find((relationship) => tupleKey(relationship) === key)
    );
  }
}
