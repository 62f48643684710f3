import type { MembershipKey } from '../../api/v1alpha1/index.js';
import type { AclCache } from '../acl-cache.js';
import { settleAll, valuesOrThrow } from '../concurrency.js';
import { decideSnapshot, isMemberSpec } from './membership-updates.js';
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
 * PUT .../members: the snapshot is the whole truth about one organisation (or group) at `now`. Every user it
 * names becomes a member, every other current member of the set is removed, and each membership it changes is
 * dated `now`, so that a late event from before the snapshot about it is stale. It writes only what changes: a
 * membership already as the snapshot says, and a membership removed earlier that it does not name, are left as
 * they are (an event is then judged against their own last change). The set's memberships come from the
 * informer cache; each write decides again on the object it replaces.
 */
export class MemberSnapshots {
  constructor(
    private readonly store: MembershipStore,
    private readonly cache: AclCache,
    private readonly now: () => Date,
  ) {}

  /**
   * `charge` is told the work the snapshot causes (the memberships it changes, as the cache shows them; at
   * least one unit) before anything is written, and refuses it by throwing.
   */
  async replace(
    set: { organisationId: string; groupId?: string },
    userIds: readonly string[],
    charge: (units: number) => Promise<void>,
  ): Promise<SnapshotCounts> {
    const now = this.now();
    const members = new Set(userIds);
    const current = this.cache
      .membershipsOf(set.organisationId, set.groupId)
      .filter((membership) => isMemberSpec(membership.spec))
      .map((membership) => membership.spec.userId);
    const keys = [...new Set([...userIds, ...current])].map((userId): MembershipKey => ({ ...set, userId }));
    await charge(Math.max(1, this.changes(keys, members, now)));
    const differences = await settleAll(keys, WRITE_CONCURRENCY, (key) =>
      this.store.update(key, (spec) => {
        const member = members.has(key.userId);
        const decided = decideSnapshot(spec, key, member, now);
        const difference: Difference = decided === spec ? 'unchanged' : member ? 'added' : 'removed';
        return { spec: decided, result: difference };
      }),
    );
    const outcome = valuesOrThrow(differences);
    return {
      added: outcome.filter((difference) => difference === 'added').length,
      removed: outcome.filter((difference) => difference === 'removed').length,
    };
  }

  /** How many of the keys' memberships the snapshot changes, judged on the cache. */
  private changes(keys: readonly MembershipKey[], members: ReadonlySet<string>, now: Date): number {
    return keys.filter((key) => {
      const spec = this.cache.membership(key)?.spec;
      return decideSnapshot(spec, key, members.has(key.userId), now) !== spec;
    }).length;
  }
}
