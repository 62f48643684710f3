import {
  derivedState,
  type Constraints,
  type PolicyGrant,
  type PolicyGrantState,
} from '../../api/v1alpha1/index.js';
import type { PaginationInfo } from '../../http/envelope.js';
import type { GrantVerdict, WithheldReason } from '../../verdict/grant-verdict.js';

/** A row of the listings (docs/acl-grants.md, "Listings"). */
export interface PolicyRow {
  policyId: string;
  itemId: string;
  itemType: string;
  /** The item's owner; absent when no single CatalogItem has the grant's itemId. */
  ownerId?: string;
  status: PolicyGrantState;
  /** Whether the grant is effective: the verdict the controller enforces. */
  enforced: boolean;
  /** Why not, when it is not (e.g. Revoked, Expired, NotAuthorized, Conflict, ItemNotFound). */
  enforcedReason?: WithheldReason;
  constraints: Constraints;
  expiryAt: string;
  /** Provider listing only: the consumer of an INDIVIDUAL grant (GROUP grants name theirs in constraints). */
  consumerId?: string;
}

export interface Page {
  offset: number;
  limit: number;
}

export interface ListingQuery extends Page {
  status?: PolicyGrantState;
}

/** An RFC 3339 time in UTC (`Z`), without a fraction when it is zero; unparsable text is kept as it is. */
export function utcTimestamp(text: string): string {
  const time = Date.parse(text);
  return Number.isNaN(time) ? text : new Date(time).toISOString().replace(/\.000Z$/, 'Z');
}

/** What a listing shows of its rows. */
export interface RowView {
  /** Name the consumer of INDIVIDUAL grants (the provider listing). */
  withConsumer: boolean;
  /** When given, GROUP rows name only these among their allowed organisations (the consumer listing). */
  visibleOrganisations?: ReadonlySet<string>;
}

export function toRow(
  grant: PolicyGrant,
  context: RowView & { ownerId: string | undefined; now: Date; verdict: GrantVerdict },
): PolicyRow {
  const { spec } = grant;
  return {
    policyId: grant.metadata.uid ?? '',
    itemId: spec.itemId,
    itemType: spec.itemType,
    ...(context.ownerId === undefined ? {} : { ownerId: context.ownerId }),
    status: derivedState(grant, context.now),
    enforced: context.verdict.enforce,
    ...(context.verdict.enforce ? {} : { enforcedReason: context.verdict.reason }),
    constraints: visibleConstraints(spec.constraints, context.visibleOrganisations),
    expiryAt: utcTimestamp(spec.expiryTime),
    ...(context.withConsumer && spec.userId !== undefined ? { consumerId: spec.userId } : {}),
  };
}

function visibleConstraints(constraints: Constraints, organisations: ReadonlySet<string> | undefined) {
  const allowed = constraints.subjects?.allowedOrgIds;
  if (organisations === undefined || allowed === undefined) return constraints;
  return { ...constraints, subjects: { allowedOrgIds: allowed.filter((org) => organisations.has(org)) } };
}

/**
 * Oldest first: creationTimestamp (RFC 3339 in UTC with whole seconds, so text order is time order), then
 * uid for grants created in the same second. Oldest first keeps offset pages stable while grants are added:
 * new grants land on the last page instead of shifting every page by one.
 */
export function compareGrants(a: Pick<PolicyGrant, 'metadata'>, b: Pick<PolicyGrant, 'metadata'>): number {
  return (
    compareText(a.metadata.creationTimestamp, b.metadata.creationTimestamp) ||
    compareText(a.metadata.uid, b.metadata.uid)
  );
}

function compareText(a: unknown, b: unknown): number {
  const [left, right] = [String(a ?? ''), String(b ?? '')];
  return left < right ? -1 : left > right ? 1 : 0;
}

/** Each grant once (a GROUP grant can be found under several index values), in listing order. */
export function distinctSorted(grants: readonly PolicyGrant[]): PolicyGrant[] {
  const byUid = new Map(grants.map((grant) => [grant.metadata.uid ?? '', grant]));
  return [...byUid.values()].sort(compareGrants);
}

/** Filters grants already in listing order (distinctSorted) by derived state and cuts the page; totalHits counts every match. */
export function selectPage(
  ordered: readonly PolicyGrant[],
  query: ListingQuery,
  now: Date,
): { page: PolicyGrant[]; paginationInfo: PaginationInfo } {
  const matching = query.status
    ? ordered.filter((grant) => derivedState(grant, now) === query.status)
    : ordered;
  return {
    page: matching.slice(query.offset, query.offset + query.limit),
    paginationInfo: { offset: query.offset, limit: query.limit, totalHits: matching.length },
  };
}
