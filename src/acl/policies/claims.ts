import { createHash } from 'node:crypto';
import type { PolicyGrantSpec } from '../../api/v1alpha1/index.js';
import type { ConfigMap } from '../resources.js';

// One claim object per (subject, item, access type): a ConfigMap whose name is derived from the triple, so
// Kubernetes' one uniqueness constraint (the object name) makes "no two active grants for the same subject,
// item and access type" hold across replicas without a check-then-create race.

export const CLAIM_LABEL = 'acl.policygrant.dev/claim';

/** `user:<uuid>` for an INDIVIDUAL grant, `organization:<uuid>` per allowed organisation of a GROUP grant. */
export type ClaimSubject = `user:${string}` | `organization:${string}`;

export interface ClaimKey {
  subject: ClaimSubject;
  itemId: string;
  accessType: string;
}

/**
 * pending: the grant is being created (or its creator died before finishing); bound: the grant was created
 * and its creator confirmed the claim with an update conditioned on the claim's resourceVersion.
 */
export type ClaimState = 'pending' | 'bound';

export interface ClaimData extends ClaimKey {
  grantName: string;
  state: ClaimState;
  /** When the claim became pending for grantName (RFC 3339). */
  pendingSince: string;
}

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

/** `claim-` and the SHA-256 (hex) of `subject|itemId|accessType`: 70 characters, a valid ConfigMap name. */
export function claimName(key: ClaimKey): string {
  const digest = createHash('sha256').update(`${key.subject}|${key.itemId}|${key.accessType}`).digest('hex');
  return `claim-${digest}`;
}

export function claimConfigMap(name: string, data: ClaimData, resourceVersion?: string): ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      labels: { [CLAIM_LABEL]: 'true' },
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    } as ConfigMap['metadata'],
    data: { ...data },
  };
}

export function readClaimData(configMap: ConfigMap): Partial<ClaimData> {
  return (configMap.data ?? {}) as Partial<ClaimData>;
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
