import type { MembershipKey } from '../../api/v1alpha1/index.js';
import type { AclCache } from '../acl-cache.js';
import { settleAll, valuesOrThrow } from '../concurrency.js';
import { decideSnapshot, isMemberSpec } from './membership-decision.js';
import type { MembershipStore } from './membership-store.js';

const WRITE_CONCURRENCY = 16;

/** Users in the most recent snapshot; bounded so that one request's writes stay bounded. */
export const MAX_SNAPSHOT_MEMBERS = 10_000;

export interface SnapshotCounts {
  added: number;
  removed: number;
}

type Difference = 'added' | 'removed' | 'unchanged';

/**
 * PUT .../members: the snapshot is the whole truth about one organisation (or group) at `now`. Every
 * membership it names becomes a member, every other membership of the set is removed, and all of them are
 * dated `now`, so that a late event from before the snapshot is stale. The set's current memberships come
 * from the informer cache.
 */
export class MemberSnapshots {
  constructor(
    private readonly store: MembershipStore,
    private readonly cache: AclCache,
    private readonly now: () => Date,
  ) {}

  async replace(
    set: { organisationId: string; groupId?: string },
    userIds: readonly string[],
  ): Promise<SnapshotCounts> {
    const now = this.now();
    const members = new Set(userIds);
    const known = this.cache.membershipsOf(set.organisationId, set.groupId).map((m) => m.spec.userId);
    const keys = [...new Set([...userIds, ...known])].map((userId): MembershipKey => ({ ...set, userId }));
    const differences = await settleAll(keys, WRITE_CONCURRENCY, (key) =>
      this.store.update(key, (spec) => {
        const member = members.has(key.userId);
        const difference: Difference =
          isMemberSpec(spec) === member ? 'unchanged' : member ? 'added' : 'removed';
        return { spec: decideSnapshot(spec, key, member, now), result: difference };
      }),
    );
    const outcome = valuesOrThrow(differences);
    return {
      added: outcome.filter((difference) => difference === 'added').length,
      removed: outcome.filter((difference) => difference === 'removed').length,
    };
  }
}
