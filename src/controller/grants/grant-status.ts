import {
  accessTypesText,
  derivedState,
  ENFORCED_CONDITION,
  findStatusCondition,
  setEnforcedAndReady,
  type Condition,
  type PolicyGrant,
  type PolicyGrantStatus,
  type ProjectedTuples,
} from '../../api/v1alpha1/index.js';
import { GrantReason } from '../../verdict/grant-verdict.js';
import { namespaceBindingText, type NamespaceBinding } from '../../verdict/namespace-authorisation.js';
import type { StatusChange } from '../reconcile-flow.js';

/** What a reconcile achieved for a grant. */
export type GrantOutcome =
  | {
      kind: 'enforced';
      relationships: number;
      /** What was written, for a later leader to know what to remove after an edit. */
      projected?: ProjectedTuples;
      zedToken: string | undefined;
    }
  | {
      kind: 'withheld';
      reason: Exclude<GrantReason, 'Projected'>;
      message: string;
      zedToken: string | undefined;
    }
  | { kind: 'failed'; message: string };

export interface EnforcedTransition {
  from: Pick<Condition, 'status' | 'reason'> | undefined;
  to: Pick<Condition, 'status' | 'reason' | 'message'>;
}

/** `changed` false: the grant's status already says all this; writing it would only cause another event. */
export interface GrantStatusChange extends StatusChange<PolicyGrantStatus> {
  /** Set when the Enforced condition changes status or reason: the moments that get an Event. */
  transition: EnforcedTransition | undefined;
}

/** Condition messages are bounded by the API (32 KiB); error messages are not. */
const MAX_MESSAGE_LENGTH = 4_096;

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function conditionOf(outcome: GrantOutcome): Pick<Condition, 'status' | 'reason' | 'message'> {
  switch (outcome.kind) {
    case 'enforced':
      return {
        status: 'True',
        reason: GrantReason.Projected,
        message: `${plural(outcome.relationships, 'relationship')} written to SpiceDB`,
      };
    case 'withheld':
      return { status: 'False', reason: outcome.reason, message: outcome.message };
    case 'failed':
      return { status: 'False', reason: GrantReason.ProjectionFailed, message: outcome.message };
  }
}

/** Field by field: the API server returns an object's keys in its own order. */
function sameProjected(a: ProjectedTuples | undefined, b: ProjectedTuples | undefined): boolean {
  const canonical = (record: ProjectedTuples | undefined) =>
    record && JSON.stringify([record.resource, record.relations, record.subjects]);
  return canonical(a) === canonical(b);
}

function sameStatus(a: PolicyGrantStatus | undefined, b: PolicyGrantStatus): boolean {
  return (
    a !== undefined &&
    a.observedGeneration === b.observedGeneration &&
    a.state === b.state &&
    a.relationships === b.relationships &&
    a.zedToken === b.zedToken &&
    a.access === b.access &&
    a.namespaceBinding === b.namespaceBinding &&
    sameProjected(a.projected, b.projected) &&
    JSON.stringify(a.conditions ?? []) === JSON.stringify(b.conditions ?? [])
  );
}

/**
 * The status a grant should have after `outcome`: its derived state, the Enforced condition (lastTransitionTime
 * kept unless the condition's status flips), the relationship count, the last write's ZedToken and what it
 * wrote, and what kubectl shows: the access types as one string and the binding of the grant's namespace
 * (`binding`, read as the verdict reads it). A failure keeps the count, token and record of the last success:
 * those tuples may well still be there.
 */
export function nextGrantStatus(
  grant: PolicyGrant,
  outcome: GrantOutcome,
  now: Date,
  binding: NamespaceBinding,
): GrantStatusChange {
  const previous = grant.status;
  const generation = grant.metadata.generation ?? 0;
  const condition = conditionOf(outcome);
  const message =
    condition.message.length > MAX_MESSAGE_LENGTH
      ? `${condition.message.slice(0, MAX_MESSAGE_LENGTH - 1)}…`
      : condition.message;
  const existing = findStatusCondition(previous?.conditions ?? [], ENFORCED_CONDITION);
  const { conditions } = setEnforcedAndReady(
    previous?.conditions ?? [],
    { ...condition, message, observedGeneration: generation },
    now,
  );
  const status: PolicyGrantStatus = {
    observedGeneration: generation,
    state: derivedState(grant, now),
    conditions,
    relationships:
      outcome.kind === 'enforced'
        ? outcome.relationships
        : outcome.kind === 'withheld'
          ? 0
          : (previous?.relationships ?? 0),
    ...zedTokenField(
      outcome.kind === 'failed' ? previous?.zedToken : (outcome.zedToken ?? previous?.zedToken),
    ),
    ...projectedField(
      outcome.kind === 'enforced'
        ? outcome.projected
        : outcome.kind === 'failed'
          ? previous?.projected
          : undefined,
    ),
    access: accessTypesText(grant.spec),
    namespaceBinding: namespaceBindingText(binding),
  };
  const transitioned =
    existing === undefined || existing.status !== condition.status || existing.reason !== condition.reason;
  return {
    status,
    changed: !sameStatus(previous, status),
    transition: transitioned
      ? {
          from: existing && { status: existing.status, reason: existing.reason },
          to: { ...condition, message },
        }
      : undefined,
  };
}

/** A failure keeps the record of the last write: those tuples may well still be there. */
function projectedField(projected: ProjectedTuples | undefined): { projected?: ProjectedTuples } {
  return projected === undefined ? {} : { projected };
}

function zedTokenField(zedToken: string | undefined): { zedToken?: string } {
  return zedToken === undefined ? {} : { zedToken };
}
