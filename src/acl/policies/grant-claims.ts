import { createHash } from 'node:crypto';
import {
  GRANT_CLAIM_KIND,
  GROUP_VERSION,
  type GrantClaim,
  type GrantClaimSpec,
  type PolicyGrantSpec,
} from '../../api/v1alpha1/index.js';

// One claim object per (subject, item, access type): a GrantClaim whose name is derived from the triple, so
// Kubernetes' one uniqueness constraint (the object name) makes "no two active grants for the same subject,
// item and access type" hold across replicas without a check-then-create race.

/** `user:<uuid>` for an INDIVIDUAL grant, `organization:<uuid>` per allowed organisation of a GROUP grant. */
export type ClaimSubject = `user:${string}` | `organization:${string}`;

export interface ClaimKey {
  subject: ClaimSubject;
  itemId: string;
  accessType: string;
}

/**
 * The triple, the grant that holds it, and its state: pending while the grant is being created (or its
 * creator died before finishing), bound once the grant was created and its creator confirmed the claim with
 * an update conditioned on the claim's resourceVersion.
 */
export type ClaimData = GrantClaimSpec;

/** A GrantClaim as the API serves it, with the fields this service relies on present. */
export type StoredClaim = GrantClaim & { metadata: { name: string; resourceVersion: string } };

export type GrantSubjectFields = Pick<PolicyGrantSpec, 'policyType' | 'userId' | 'itemId' | 'constraints'>;

export function claimSubjects(spec: GrantSubjectFields): ClaimSubject[] {
  if (spec.policyType === 'INDIVIDUAL') return spec.userId === undefined ? [] : [`user:${spec.userId}`];
  return (spec.constraints.subjects?.allowedOrgIds ?? []).map((org): ClaimSubject => `organization:${org}`);
}

/** Every (subject, item, access type) a grant occupies. */
export function claimKeys(spec: GrantSubjectFields): ClaimKey[] {
  return claimSubjects(spec).flatMap((subject) =>
    spec.constraints.access.map(({ accessType }) => ({ subject, itemId: spec.itemId, accessType })),
  );
}

/** `claim-` and the SHA-256 (hex) of `subject|itemId|accessType`: 70 characters, a valid object name. */
export function claimName(key: ClaimKey): string {
  const digest = createHash('sha256').update(`${key.subject}|${key.itemId}|${key.accessType}`).digest('hex');
  return `claim-${digest}`;
}

export function claimObject(name: string, data: ClaimData, resourceVersion?: string): GrantClaim {
  return {
    apiVersion: GROUP_VERSION,
    kind: GRANT_CLAIM_KIND,
    metadata: { name, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: { ...data },
  };
}

/**
 * What a create finds in an existing claim:
 * - own: it names the grant this request creates (a retry or a twin with the same Idempotency-Key);
 * - in-flight: it is pending and recent: another request is creating its grant right now (whether or not
 *   that grant exists yet: the claim is only settled once bound), so its outcome is still open;
 * - active: its grant exists and is effective (the grant verdict), and the claim is settled (bound, or
 *   pending so long that its creator died after creating the grant): 409;
 * - vacant: its grant is gone or not effective (revoked, expired, refused by the verdict), or the claim is a
 *   pending leftover older than `pendingTimeoutMs` (its creator died): the claim may be taken over.
 */
export type ClaimVerdict = 'own' | 'active' | 'in-flight' | 'vacant';

export function judgeClaim(input: {
  claim: Partial<ClaimData>;
  /** Whether the grant the claim names exists and is effective (read from the apiserver, then judged). */
  holderEffective: boolean;
  ownGrantName: string;
  now: Date;
  pendingTimeoutMs: number;
}): ClaimVerdict {
  const { claim, now } = input;
  if (claim.grantName === input.ownGrantName) return 'own';
  if (isInFlight(claim, now, input.pendingTimeoutMs)) return 'in-flight';
  return input.holderEffective ? 'active' : 'vacant';
}

/** Pending for less than `pendingTimeoutMs`: its creator is taken to be alive and still at work. */
export function isInFlight(claim: Partial<ClaimData>, now: Date, pendingTimeoutMs: number): boolean {
  if (claim.state !== 'pending') return false;
  return now.getTime() - Date.parse(claim.pendingSince ?? '') < pendingTimeoutMs;
}

/** How a 409 names a claim: `user <uuid>` or `members of organisation <uuid>`. */
export function describeSubject(subject: string): string {
  const [type, id] = subject.split(/:(.*)/s);
  return type === 'organization' ? `members of organisation ${id}` : `user ${id}`;
}
