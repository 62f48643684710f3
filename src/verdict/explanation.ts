import {
  ENFORCED_CONDITION,
  findStatusCondition,
  isMember,
  type CatalogItem,
  type Condition,
  type Delegation,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
} from '../api/v1alpha1/index.js';
import type { DelegationReason } from './delegation-verdict.js';
import { delegationWithdrawal } from './delegation-verdict.js';
import {
  GrantEvaluator,
  GrantReason,
  lookupGrantItem,
  type GrantVerdict,
  type GrantView,
} from './grant-verdict.js';

// Why a subject has (or lacks) one access type on one item: every object that bears on it, each with its own
// verdict. Every verdict on a grant is the GrantEvaluator's (the controller's), and on a delegation the
// controller's withdrawal rule; this module only names the finer cause and walks the objects in order.

/** The cause of an object's verdict: Effective when it counts towards allowing. */
export const ExplainReason = {
  Effective: 'Effective',
  Revoked: 'Revoked',
  Expired: 'Expired',
  NamespaceNotBound: 'NamespaceNotBound',
  NamespaceBoundToAnotherOrganisation: 'NamespaceBoundToAnotherOrganisation',
  ItemMissing: 'ItemMissing',
  ItemAmbiguous: 'ItemAmbiguous',
  ItemOfAnotherType: 'ItemOfAnotherType',
  AccessTypeWithdrawn: 'AccessTypeWithdrawn',
  NotMember: 'NotMember',
  NotOwner: 'NotOwner',
  OwnerLacksAccess: 'OwnerLacksAccess',
  Conflict: 'Conflict',
  NotProjectable: 'NotProjectable',
  /** A Membership of an organisation the reader does not administer: whether it exists is not shown. */
  Undisclosed: 'Undisclosed',
} as const;
export type ExplainReason = (typeof ExplainReason)[keyof typeof ExplainReason];

export type ExplainedKind = 'CatalogItem' | 'Namespace' | 'PolicyGrant' | 'Membership' | 'Delegation';

export type Subject = { type: 'user' | 'agent'; id: string };

export interface ExplanationQuery {
  subject: Subject;
  itemId: string;
  accessType: string;
}

/** The Enforced condition of an object, and whether it was set from the object's current generation. */
export interface Enforcement {
  status: Condition['status'];
  reason: string;
  message: string;
  observedGeneration?: number;
  generation?: number;
  /** The condition was set from metadata.generation: the controller has acted on what the record says. */
  current: boolean;
}

export interface ExplainedObject {
  kind: ExplainedKind;
  /** `namespace/name` for namespaced kinds, the name otherwise; empty for an object that does not exist. */
  ref: string;
  policyId?: string;
  effective: boolean;
  reason: ExplainReason;
  message: string;
  /** Absent for kinds without status (CatalogItem, Namespace) and for objects the controller has not seen. */
  enforcement?: Enforcement;
  /** A delegation's owner's own access, on which the delegation depends. */
  owner?: Explanation;
}

export interface Explanation {
  subject: Subject;
  itemId: string;
  accessType: string;
  /** The record's verdict: what the controller enforces once it has acted on every object. */
  allowed: boolean;
  /** What the objects' Enforced conditions say SpiceDB holds now. */
  enforced: boolean;
  /** Set when `allowed` and `enforced` differ: the record is not (or no longer) what SpiceDB enforces. */
  disagreement?: string;
  message: string;
  objects: ExplainedObject[];
}

/** The verdict's view plus what the explanation reads besides grants. */
export interface ExplanationView extends GrantView {
  grantsOnItem(itemId: string): PolicyGrant[];
  membership(key: MembershipKey): Membership | undefined;
  delegationsOfAgent(agentId: string): Delegation[];
  /** The owner the agent's Agent object names, if there is one. */
  agentOwner(agentId: string): string | undefined;
  /**
   * Whether the reader may see the organisation's membership facts (who is a member, who was removed and when):
   * those of organisations it does not administer are left out, however they bear on the verdict.
   */
  disclosesMembership(organisationId: string): boolean;
}

/**
 * The delegation relation that gives an agent an access type: schema.zed's delegated_querier is
 * querier_delegate intersected with the owner's api_consumer; the viewer and editor delegations ride on
 * relations no grant writes.
 */
const DELEGATION_OF_ACCESS_TYPE: Readonly<Record<string, Delegation['spec']['relation']>> = {
  api: 'querier',
};

export function explain(query: ExplanationQuery, view: ExplanationView, now: Date): Explanation {
  const evaluator = new GrantEvaluator(view, now);
  return query.subject.type === 'agent'
    ? explainAgent(query, view, evaluator)
    : explainUser(query, view, evaluator);
}

function explainUser(query: ExplanationQuery, view: ExplanationView, evaluator: GrantEvaluator): Explanation {
  const { itemId, accessType, subject } = query;
  const objects = [...itemObjects(query, view), ...namespaceObjects(query, view)];
  const paths: Path[] = [];
  const members = new Map<string, { real: ExplainedObject; shown: ExplainedObject }>();
  for (const grant of relevantGrants(query, view)) {
    const explained = grantObject(grant, evaluator.evaluate(grant), view);
    objects.push(explained);
    if (grant.spec.policyType === 'INDIVIDUAL') {
      paths.push({ record: explained.effective, enforced: isEnforced(explained), via: [explained] });
      continue;
    }
    for (const organisationId of grant.spec.constraints.subjects?.allowedOrgIds ?? []) {
      let member = members.get(organisationId);
      if (member === undefined) {
        const real = membershipObject(view, organisationId, subject.id);
        const shown = view.disclosesMembership(organisationId) ? real : undisclosedMembership(organisationId);
        member = { real, shown };
        members.set(organisationId, member);
      }
      paths.push({
        record: explained.effective && member.real.effective,
        enforced: isEnforced(explained) && isEnforced(member.real),
        via: [explained, member.shown],
      });
    }
  }
  objects.push(...[...members.values()].map((member) => member.shown));
  return conclude(query, objects, paths, `no grant gives user ${subject.id} ${accessType} on ${itemId}`);
}

function explainAgent(
  query: ExplanationQuery,
  view: ExplanationView,
  evaluator: GrantEvaluator,
): Explanation {
  const { itemId, accessType, subject } = query;
  const relation = DELEGATION_OF_ACCESS_TYPE[accessType];
  const objects: ExplainedObject[] = [];
  const paths: Path[] = [];
  const owner = view.agentOwner(subject.id);
  const delegations = view
    .delegationsOfAgent(subject.id)
    .filter((delegation) => delegation.spec.itemId === itemId && delegation.spec.relation === relation);
  for (const delegation of delegations) {
    const ownerQuery = {
      subject: { type: 'user', id: delegation.spec.ownerId } as const,
      itemId,
      accessType,
    };
    const ownerExplanation = explainUser(ownerQuery, view, evaluator);
    const explained = delegationObject(delegation, owner, ownerExplanation, evaluator.now);
    objects.push(explained);
    paths.push({
      record: explained.effective,
      enforced: isEnforced(explained) && ownerExplanation.enforced,
      via: [explained],
    });
  }
  const none =
    relation === undefined
      ? `no delegation gives an agent access type ${accessType} (only api, through a querier delegation)`
      : `no ${relation} delegation gives agent ${subject.id} ${accessType} on ${itemId}`;
  return conclude(query, objects, paths, none);
}

/**
 * One way to the access: allowed when every object on it is effective, enforced when every one is (`record` and
 * `enforced` are computed from the real objects; `via` holds them as shown, undisclosed Memberships included).
 */
interface Path {
  record: boolean;
  enforced: boolean;
  via: ExplainedObject[];
}

function conclude(
  query: ExplanationQuery,
  objects: ExplainedObject[],
  paths: Path[],
  none: string,
): Explanation {
  // A path through an undisclosed Membership is named last, and never by its grant: that would name the
  // organisation the subject is a member of.
  const allowing = paths.find((path) => path.record && !isHidden(path)) ?? paths.find((path) => path.record);
  const allowed = allowing !== undefined;
  const enforced = paths.some((path) => path.enforced);
  const message = allowing
    ? isHidden(allowing)
      ? 'allowed by a GROUP grant, through a Membership the reader may not see'
      : `allowed by ${allowing.via.map(describe).join(' with ')}`
    : paths.length === 0
      ? `denied: ${none}`
      : `denied: ${objects
          .filter((object) => !object.effective)
          .map(
            (object) =>
              `${describe(object)} ${isUndisclosed(object) ? 'is not shown' : 'is not effective'} (${object.reason})`,
          )
          .join('; ')}`;
  return {
    ...query,
    allowed,
    enforced,
    ...(allowed === enforced ? {} : { disagreement: disagreement(allowed, paths) }),
    message,
    objects,
  };
}

/** Names the objects that differ, undisclosed Memberships left out (their state would tell their facts). */
function disagreement(allowed: boolean, paths: Path[]): string {
  if (allowed) {
    const pending = paths
      .filter((path) => path.record)
      .flatMap((path) => path.via.filter((object) => !isEnforced(object)));
    return `the record allows, but SpiceDB does not enforce it yet: ${named(pending)} not Enforced`;
  }
  const stale = paths
    .filter((path) => path.enforced)
    .flatMap((path) => path.via.filter((object) => !object.effective));
  return `the record denies, but SpiceDB still enforces ${named(stale)}: the controller has not acted yet`;
}

function named(objects: ExplainedObject[]): string {
  const shown = [...new Set(objects.filter((object) => !isUndisclosed(object)).map(describe))];
  return shown.length > 0 ? shown.join(', ') : 'objects the reader may not see';
}

function describe(object: ExplainedObject): string {
  return object.ref ? `${object.kind} ${object.ref}` : `a ${object.kind}`;
}

function isUndisclosed(object: ExplainedObject): boolean {
  return object.reason === ExplainReason.Undisclosed;
}

const isHidden = (path: Path) => path.via.some(isUndisclosed);

function isEnforced(object: ExplainedObject): boolean {
  return object.enforcement?.status === 'True';
}

/** Grants on the item that name the access type and cover the subject: its INDIVIDUAL ones, every GROUP one. */
function relevantGrants(query: ExplanationQuery, view: ExplanationView): PolicyGrant[] {
  return view
    .grantsOnItem(query.itemId)
    .filter(
      (grant) =>
        grant.spec.constraints.access.some((access) => access.accessType === query.accessType) &&
        (grant.spec.policyType === 'GROUP' || grant.spec.userId === query.subject.id),
    )
    .sort(byRef);
}

const byRef = (a: PolicyGrant, b: PolicyGrant) => refOf(a).localeCompare(refOf(b));

function refOf(object: { metadata: { namespace?: string; name?: string } }): string {
  const { namespace, name = '' } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

function enforcementOf(object: {
  metadata: { generation?: number };
  status?: { conditions?: Condition[] };
}): Enforcement | undefined {
  const condition = findStatusCondition(object.status?.conditions ?? [], ENFORCED_CONDITION);
  if (condition === undefined) return undefined;
  const { generation } = object.metadata;
  return {
    status: condition.status,
    reason: condition.reason,
    message: condition.message,
    ...(condition.observedGeneration === undefined
      ? {}
      : { observedGeneration: condition.observedGeneration }),
    ...(generation === undefined ? {} : { generation }),
    current: condition.observedGeneration === generation,
  };
}

/** The CatalogItems with the item id: none (missing), one, or several (ambiguous); and the access type on it. */
function itemObjects(query: ExplanationQuery, view: ExplanationView): ExplainedObject[] {
  const items = view.itemsWithId(query.itemId);
  if (items.length === 0) {
    return [
      {
        kind: 'CatalogItem',
        ref: '',
        effective: false,
        reason: ExplainReason.ItemMissing,
        message: `no CatalogItem has itemId "${query.itemId}"`,
      },
    ];
  }
  return items.map((item) => itemObject(item, items.length, query.accessType));
}

function itemObject(item: CatalogItem, count: number, accessType: string): ExplainedObject {
  const ref = refOf(item);
  if (count > 1) {
    return {
      kind: 'CatalogItem',
      ref,
      effective: false,
      reason: ExplainReason.ItemAmbiguous,
      message: `${count} CatalogItems have itemId "${item.spec.itemId}"; grants on it are denied`,
    };
  }
  if (!item.spec.accessTypes.includes(accessType)) {
    return {
      kind: 'CatalogItem',
      ref,
      effective: false,
      reason: ExplainReason.AccessTypeWithdrawn,
      message: `access type ${accessType} is not allowed on the item (allowed: ${item.spec.accessTypes.join(', ')})`,
    };
  }
  return {
    kind: 'CatalogItem',
    ref,
    effective: true,
    reason: ExplainReason.Effective,
    message: `${item.spec.itemType} of organisation ${item.spec.organisationId}, owned by ${item.spec.ownerId}`,
  };
}

/** The namespaces (other than the ACL API's) that hold grants on the item, and their binding. */
function namespaceObjects(query: ExplanationQuery, view: ExplanationView): ExplainedObject[] {
  const items = view.itemsWithId(query.itemId);
  const organisation = items.length === 1 ? items[0]?.spec.organisationId : undefined;
  const namespaces = new Set(
    relevantGrants(query, view)
      .map((grant) => grant.metadata.namespace ?? '')
      .filter((namespace) => namespace !== view.aclNamespace),
  );
  return [...namespaces].sort().map((namespace) => {
    const bound = view.organisationOfNamespace(namespace);
    const reason =
      bound === undefined
        ? ExplainReason.NamespaceNotBound
        : bound === organisation
          ? ExplainReason.Effective
          : ExplainReason.NamespaceBoundToAnotherOrganisation;
    const message = bound === undefined ? 'not bound to an organisation' : `bound to organisation ${bound}`;
    return {
      kind: 'Namespace',
      ref: namespace,
      effective: reason === ExplainReason.Effective,
      reason,
      message,
    };
  });
}

/** The finer cause of a withheld grant: the verdict's reason split the way a reader acts on it. */
function grantCause(grant: PolicyGrant, verdict: GrantVerdict, view: ExplanationView): ExplainReason {
  if (verdict.enforce) return ExplainReason.Effective;
  switch (verdict.reason) {
    case GrantReason.Revoked:
    case GrantReason.Expired:
    case GrantReason.Conflict:
      return verdict.reason;
    case GrantReason.AccessTypeNotAllowed:
      return ExplainReason.AccessTypeWithdrawn;
    case GrantReason.NotAuthorized:
      return view.organisationOfNamespace(grant.metadata.namespace ?? '') === undefined
        ? ExplainReason.NamespaceNotBound
        : ExplainReason.NamespaceBoundToAnotherOrganisation;
    case GrantReason.ItemNotFound:
      return itemCause(grant, view);
    case GrantReason.ProjectionFailed:
      return ExplainReason.NotProjectable;
  }
}

function itemCause(grant: PolicyGrant, view: ExplanationView): ExplainReason {
  switch (lookupGrantItem(grant.spec, view).kind) {
    case 'missing':
      return ExplainReason.ItemMissing;
    case 'ambiguous':
      return ExplainReason.ItemAmbiguous;
    case 'otherType':
      return ExplainReason.ItemOfAnotherType;
    case 'found':
      // The item is there, but the registry has no object type for its item type.
      return ExplainReason.NotProjectable;
  }
}

function grantObject(grant: PolicyGrant, verdict: GrantVerdict, view: ExplanationView): ExplainedObject {
  const enforcement = enforcementOf(grant);
  const subject =
    grant.spec.policyType === 'INDIVIDUAL'
      ? `user ${grant.spec.userId}`
      : `members of ${(grant.spec.constraints.subjects?.allowedOrgIds ?? []).join(', ')}`;
  return {
    kind: 'PolicyGrant',
    ref: refOf(grant),
    ...(grant.metadata.uid ? { policyId: grant.metadata.uid } : {}),
    effective: verdict.enforce,
    reason: grantCause(grant, verdict, view),
    message: verdict.enforce
      ? `${grant.spec.policyType} grant to ${subject} until ${grant.spec.expiryTime}`
      : verdict.message,
    ...(enforcement ? { enforcement } : {}),
  };
}

/** Default deny: a member only while a Membership of the organisation itself says so. */
function membershipObject(view: ExplanationView, organisationId: string, userId: string): ExplainedObject {
  const membership = view.membership({ organisationId, userId });
  if (membership === undefined) {
    return {
      kind: 'Membership',
      ref: '',
      effective: false,
      reason: ExplainReason.NotMember,
      message: `no Membership says user ${userId} is a member of organisation ${organisationId}`,
    };
  }
  const member = isMember(membership);
  const enforcement = enforcementOf(membership);
  return {
    kind: 'Membership',
    ref: refOf(membership),
    effective: member,
    reason: member ? ExplainReason.Effective : ExplainReason.NotMember,
    message: member
      ? `user ${userId} is a member of organisation ${organisationId}`
      : `user ${userId} was removed from organisation ${organisationId} at ${membership.spec.removedAt ?? 'deletion'}`,
    ...(enforcement ? { enforcement } : {}),
  };
}

/**
 * A Membership the reader may not see, the same whatever it says: no ref, no condition, never effective (the
 * verdict is computed from the real one).
 */
function undisclosedMembership(organisationId: string): ExplainedObject {
  return {
    kind: 'Membership',
    ref: '',
    effective: false,
    reason: ExplainReason.Undisclosed,
    message: `the memberships of organisation ${organisationId} are shown only to its org_admins and cos_admin`,
  };
}

const WITHDRAWN: Record<(typeof DelegationReason)[keyof typeof DelegationReason], ExplainReason> = {
  Revoked: ExplainReason.Revoked,
  Expired: ExplainReason.Expired,
  NotOwner: ExplainReason.NotOwner,
};

function delegationObject(
  delegation: Delegation,
  agentOwner: string | undefined,
  owner: Explanation,
  now: Date,
): ExplainedObject {
  const withdrawal = delegationWithdrawal(delegation, agentOwner, now);
  const reason: ExplainReason = withdrawal
    ? WITHDRAWN[withdrawal.reason]
    : owner.allowed
      ? ExplainReason.Effective
      : ExplainReason.OwnerLacksAccess;
  const message =
    withdrawal?.message ??
    (owner.allowed
      ? `${delegation.spec.relation} delegation from user ${delegation.spec.ownerId}, who has the access`
      : `the owner ${delegation.spec.ownerId} lacks the access: ${owner.message}`);
  const enforcement = enforcementOf(delegation);
  return {
    kind: 'Delegation',
    ref: refOf(delegation),
    effective: reason === ExplainReason.Effective,
    reason,
    message,
    ...(enforcement ? { enforcement } : {}),
    owner,
  };
}
