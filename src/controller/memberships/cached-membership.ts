import type { Membership, MembershipSpec, MembershipStatus } from '../../api/v1alpha1/index.js';
import type { InternPool } from '../../runtime/index.js';
import { cachedMetadata, type CachedMetadata } from '../cached-metadata.js';

/**
 * A Membership as the controller caches it: what its projection, withdrawal and status read. The spec's event
 * bookkeeping (`appliedEvents`, up to 16 entries, and `changedAt`) is the ACL API's and goes, as do labels,
 * annotations and managedFields. The status is kept whole: it is written back whole through its subresource.
 */
export interface CachedMembership extends Omit<Membership, 'metadata' | 'spec'> {
  metadata: CachedMetadata;
  spec: Pick<MembershipSpec, 'organisationId' | 'groupId' | 'userId' | 'removedAt'>;
}

function cachedStatus(status: MembershipStatus | undefined, pool: InternPool): MembershipStatus | undefined {
  if (status === undefined) return undefined;
  return {
    observedGeneration: status.observedGeneration,
    conditions: pool.share(status.conditions),
    zedToken: status.zedToken,
  };
}

/** The Membership informer's transform: a compact record of each membership, repeated parts shared. */
export function membershipCacheTransform(pool: InternPool): (membership: Membership) => CachedMembership {
  return ({ apiVersion, kind, metadata, spec, status }) => ({
    apiVersion,
    kind,
    metadata: cachedMetadata(metadata, pool),
    spec: {
      organisationId: pool.intern(spec.organisationId),
      groupId: pool.intern(spec.groupId),
      userId: spec.userId,
      removedAt: pool.intern(spec.removedAt),
    },
    status: cachedStatus(status, pool),
  });
}
