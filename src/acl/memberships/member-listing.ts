import { isMember } from '../../api/v1alpha1/index.js';
import type { PaginationInfo } from '../../http/envelope.js';
import type { AclCache } from '../acl-cache.js';
import type { Page } from '../policies/policy-rows.js';

export interface MemberRow {
  userId: string;
  /** When the membership's state was last set (the event or snapshot that made the user a member). */
  changedAt?: string;
}

/** GET .../members: the current members of an organisation (or group), by userId, one page of them. */
export function listMembers(
  cache: AclCache,
  set: { organisationId: string; groupId?: string },
  page: Page,
): { results: MemberRow[]; paginationInfo: PaginationInfo } {
  const byUser = new Map<string, MemberRow>();
  for (const membership of cache.membershipsOf(set.organisationId, set.groupId).filter(isMember)) {
    const { userId, changedAt } = membership.spec;
    byUser.set(userId, { userId, ...(changedAt === undefined ? {} : { changedAt }) });
  }
  const rows = [...byUser.values()].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0));
  return {
    results: rows.slice(page.offset, page.offset + page.limit),
    paginationInfo: { offset: page.offset, limit: page.limit, totalHits: rows.length },
  };
}
