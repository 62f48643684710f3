import { derivedState, EnforcedReason, type CatalogItem, type PolicyGrant } from '../api/v1alpha1/index.js';
import type { Relationship } from '../spicedb/client.js';
import type { Registry } from '../spicedb/registry.js';
import { authoriseNamespace, namespaceBinding, type NamespaceBinding } from './namespace-authorisation.js';
import { describeUnprojectable, projectGrant } from './projection.js';
import { tupleKey, type TupleKey } from './tuple-key.js';

/**
 * Reasons of a grant's Enforced condition: the API's, plus AccessTypeNotAllowed (the grant names an access
 * type its CatalogItem does not list). Not ItemNotFound, which would send the reader looking for a missing
 * item, nor NotAuthorized, which is about where the grant lives.
 */
export const GrantReason = { ...EnforcedReason, AccessTypeNotAllowed: 'AccessTypeNotAllowed' } as const;
export type GrantReason = (typeof GrantReason)[keyof typeof GrantReason];

/** Why a grant is not effective: every reason but Projected. */
export type WithheldReason = Exclude<GrantReason, 'Projected'>;
export const WITHHELD_REASONS = Object.values(GrantReason).filter(
  (reason): reason is WithheldReason => reason !== GrantReason.Projected,
) as [WithheldReason, ...WithheldReason[]];

export type GrantVerdict =
  | { enforce: true; relationships: Relationship[] }
  | { enforce: false; reason: WithheldReason; message: string };

/** What the verdict on a grant depends on besides the grant: the caches, as the reconcilers see them. */
export interface GrantView {
  readonly registry: Registry;
  /** The ACL API's namespace: grants there are authorised for every item. */
  readonly aclNamespace: string;
  itemsWithId(itemId: string): CatalogItem[];
  /** The organisation a namespace is bound to by its label, if any. */
  organisationOfNamespace(namespace: string): string | undefined;
  /** The grants that project `key` when enforced (whatever their state now). */
  grantsWithTupleKey(key: TupleKey): PolicyGrant[];
}

const withheld = (reason: WithheldReason, message: string): GrantVerdict => ({
  enforce: false,
  reason,
  message,
});

export function grantKey(grant: PolicyGrant): string {
  return `${grant.metadata.namespace ?? ''}/${grant.metadata.name ?? ''}`;
}

/** Older first: creationTimestamp, then name, then namespace (a total order on the grants of a cluster). */
export function isOlder(a: PolicyGrant, b: PolicyGrant): boolean {
  const created = (grant: PolicyGrant) => Date.parse(String(grant.metadata.creationTimestamp ?? ''));
  const [createdA, createdB] = [created(a), created(b)];
  if (createdA !== createdB) return createdA < createdB;
  const [nameA, nameB] = [a.metadata.name ?? '', b.metadata.name ?? ''];
  if (nameA !== nameB) return nameA < nameB;
  return (a.metadata.namespace ?? '') < (b.metadata.namespace ?? '');
}

function stateVerdict(grant: PolicyGrant, now: Date): GrantVerdict | undefined {
  if (grant.metadata.deletionTimestamp) return withheld(GrantReason.Revoked, 'the grant is being deleted');
  switch (derivedState(grant, now)) {
    case 'DELETED': {
      const by = grant.spec.revokedBy ? ` by ${grant.spec.revokedBy}` : '';
      return withheld(GrantReason.Revoked, `revoked at ${grant.spec.revokedAt}${by}`);
    }
    case 'EXPIRED':
      return withheld(GrantReason.Expired, `expired at ${grant.spec.expiryTime}`);
    case 'ACTIVE':
      return undefined;
  }
}

/** What the CatalogItems say of a grant's item: exactly one with its itemId and itemType, or why not. */
export type ItemLookup =
  | { kind: 'found'; item: CatalogItem }
  | { kind: 'missing' | 'ambiguous' | 'otherType'; items: CatalogItem[]; message: string };

export function lookupGrantItem(
  spec: Pick<PolicyGrant['spec'], 'itemId' | 'itemType'>,
  view: Pick<GrantView, 'itemsWithId'>,
): ItemLookup {
  const { itemId, itemType } = spec;
  const items = view.itemsWithId(itemId);
  const [item] = items;
  if (item === undefined) return { kind: 'missing', items, message: `no CatalogItem has itemId "${itemId}"` };
  if (items.length > 1) {
    const names = items.map((candidate) => candidate.metadata.name).sort();
    return {
      kind: 'ambiguous',
      items,
      message: `itemId "${itemId}" is ambiguous: CatalogItems ${names.join(', ')} all have it; grants on it are denied`,
    };
  }
  if (item.spec.itemType !== itemType) {
    return {
      kind: 'otherType',
      items,
      message: `CatalogItem ${item.metadata.name} has itemId "${itemId}" with itemType ${item.spec.itemType}, not ${itemType}`,
    };
  }
  return { kind: 'found', item };
}

function itemOf(grant: PolicyGrant, view: GrantView): CatalogItem | GrantVerdict {
  const lookup = lookupGrantItem(grant.spec, view);
  return lookup.kind === 'found' ? lookup.item : withheld(GrantReason.ItemNotFound, lookup.message);
}

function accessVerdict(grant: PolicyGrant, item: CatalogItem): GrantVerdict | undefined {
  const allowed = new Set(item.spec.accessTypes);
  const refused = grant.spec.constraints.access
    .map((access) => access.accessType)
    .filter((accessType) => !allowed.has(accessType));
  if (refused.length === 0) return undefined;
  return withheld(
    GrantReason.AccessTypeNotAllowed,
    `CatalogItem ${item.metadata.name} does not allow access type ${refused.map((t) => `"${t}"`).join(', ')}` +
      ` (allowed: ${item.spec.accessTypes.join(', ')})`,
  );
}

type NamespaceView = Pick<GrantView, 'aclNamespace' | 'organisationOfNamespace'>;

/** What the verdict reads of the grant's namespace. */
function namespaceFacts(grant: PolicyGrant, view: NamespaceView) {
  const grantNamespace = grant.metadata.namespace ?? '';
  return {
    grantNamespace,
    aclNamespace: view.aclNamespace,
    namespaceOrganisation: view.organisationOfNamespace(grantNamespace),
  };
}

/** The binding of the grant's namespace, read as the verdict reads it (the grant's status shows it). */
export function grantNamespaceBinding(grant: PolicyGrant, view: NamespaceView): NamespaceBinding {
  return namespaceBinding(namespaceFacts(grant, view));
}

function authoriseGrantNamespace(grant: PolicyGrant, item: CatalogItem, view: GrantView) {
  return authoriseNamespace({ ...namespaceFacts(grant, view), itemOrganisation: item.spec.organisationId });
}

/** Everything but conflicts: state, item, namespace, access types, and whether the registry can project it. */
export function eligibility(grant: PolicyGrant, view: GrantView, now: Date): GrantVerdict {
  const byState = stateVerdict(grant, now);
  if (byState) return byState;
  const item = itemOf(grant, view);
  if ('enforce' in item) return item;
  const authorisation = authoriseGrantNamespace(grant, item, view);
  if (!authorisation.authorised) return withheld(GrantReason.NotAuthorized, authorisation.message);
  const byAccess = accessVerdict(grant, item);
  if (byAccess) return byAccess;
  const { relationships, unprojectable } = projectGrant(grant.spec, view.registry);
  const [problem] = unprojectable;
  if (problem === undefined) return { enforce: true, relationships };
  const reason = {
    itemType: GrantReason.ItemNotFound,
    accessType: GrantReason.AccessTypeNotAllowed,
    subject: GrantReason.ProjectionFailed,
    id: GrantReason.ProjectionFailed,
  }[problem.kind];
  return withheld(reason, unprojectable.map(describeUnprojectable).join('; '));
}

interface Blocker {
  grant: PolicyGrant;
  key: TupleKey;
}

/**
 * Verdicts at one instant, remembered for the pass (a resync evaluates every grant once, and conflicts make
 * grants look at each other). Conflicts: two eligible grants that project one tuple (same subject, item and
 * access type: the spec's 409 rule, broken by kubectl) are resolved oldest first: a grant is blocked by an
 * older eligible grant that shares a tuple and is not itself blocked. The blocked grant projects nothing.
 */
export class GrantEvaluator {
  private readonly eligibilities = new Map<string, GrantVerdict>();
  private readonly blockers = new Map<string, Blocker | null>();

  constructor(
    private readonly view: GrantView,
    readonly now: Date,
  ) {}

  evaluate(grant: PolicyGrant): GrantVerdict {
    const verdict = this.eligibility(grant);
    if (!verdict.enforce) return verdict;
    const blocker = this.blockerOf(grant, verdict.relationships);
    if (!blocker) return verdict;
    const { namespace, name, uid } = blocker.grant.metadata;
    return withheld(
      GrantReason.Conflict,
      `the older grant ${namespace}/${name} (policy ${uid}) already gives the same access: ${blocker.key}`,
    );
  }

  /** The relationship an enforced grant other than `excludedGrantKey` gives under `key`, if any. */
  enforcedBy(
    key: TupleKey,
    excludedGrantKey?: string,
  ): { grant: PolicyGrant; relationship: Relationship } | undefined {
    for (const grant of this.view.grantsWithTupleKey(key)) {
      if (grantKey(grant) === excludedGrantKey) continue;
      const verdict = this.evaluate(grant);
      const relationship = verdict.enforce
        ? verdict.relationships.find((candidate) => tupleKey(candidate) === key)
        : undefined;
      if (relationship) return { grant, relationship };
    }
    return undefined;
  }

  private eligibility(grant: PolicyGrant): GrantVerdict {
    const key = grantKey(grant);
    let verdict = this.eligibilities.get(key);
    if (!verdict) {
      verdict = eligibility(grant, this.view, this.now);
      this.eligibilities.set(key, verdict);
    }
    return verdict;
  }

  private blockerOf(grant: PolicyGrant, relationships: Relationship[]): Blocker | undefined {
    const key = grantKey(grant);
    const known = this.blockers.get(key);
    if (known !== undefined) return known ?? undefined;
    let blocker: Blocker | undefined;
    for (const tuple of relationships.map(tupleKey)) {
      for (const other of this.view.grantsWithTupleKey(tuple)) {
        if (other === grant || grantKey(other) === key || !isOlder(other, grant)) continue;
        const verdict = this.eligibility(other);
        // Recursion only ever goes to older grants, so it ends.
        if (verdict.enforce && !this.blockerOf(other, verdict.relationships)) {
          blocker = { grant: other, key: tuple };
          break;
        }
      }
      if (blocker) break;
    }
    this.blockers.set(key, blocker ?? null);
    return blocker;
  }
}

export function evaluateGrant(grant: PolicyGrant, view: GrantView, now: Date): GrantVerdict {
  return new GrantEvaluator(view, now).evaluate(grant);
}
