import { z } from 'zod';
import { ENFORCED_CONDITION, type PolicyGrant } from '../../api/v1alpha1/index.js';
import type { AclCache } from '../acl-cache.js';

/** The longest `Prefer: wait=N` honoured; a larger N is clamped (RFC 7240 lets the server choose). */
export const MAX_WAIT_SECONDS = 60;

/**
 * `Prefer: wait=N` (RFC 7240): answer once the change is enforced, or after N seconds at most. The value
 * may be quoted and `=` surrounded by whitespace, which RFC 7240's grammar allows (BWS, `word`).
 */
export function waitPreference(prefer: string | undefined): number | undefined {
  const match = /(?:^|[\s,;])wait\s*=\s*(?:(\d{1,6})|"(\d{1,6})")(?=\s*(?:$|[,;]))/i.exec(prefer ?? '');
  return match ? Math.min(Number(match[1] ?? match[2]), MAX_WAIT_SECONDS) : undefined;
}

export const EnforcementReportSchema = z
  .object({
    policyId: z.string(),
    enforced: z
      .boolean()
      .describe(
        'Whether the controller reports this change enforced: the grant projected (create), its relationships gone (delete).',
      ),
    reason: z
      .string()
      .optional()
      .describe('The reason of the Enforced condition, when the controller has reported one.'),
    zedToken: z
      .string()
      .optional()
      .describe('SpiceDB consistency token of the projection; pass it to /v1/check as consistency_token.'),
  })
  .meta({ id: 'EnforcementReport' });

export type EnforcementReport = z.infer<typeof EnforcementReportSchema>;

export type WaitTarget = 'enforced' | 'revoked';

// Reasons after which waiting longer changes nothing until someone acts (ProjectionFailed is retried).
const SETTLED_REASONS = new Set([
  'Projected',
  'Revoked',
  'Expired',
  'NotAuthorized',
  'ItemNotFound',
  'Conflict',
]);

/**
 * Read-your-grant: waits until the controller has reported, for the grant's current generation, that it
 * is enforced (or, for a revocation, that its relationships are gone), and returns the ZedToken of that
 * projection. A check with that token cannot see the world before the change.
 */
export async function awaitEnforcement(
  cache: Pick<AclCache, 'grantByUid' | 'waitForGrant'>,
  policyIds: readonly string[],
  target: WaitTarget,
  timeoutMs: number,
): Promise<EnforcementReport[]> {
  return Promise.all(
    policyIds.map(async (policyId) => {
      const grant = cache.grantByUid(policyId);
      if (grant) {
        const { namespace = '', name = '' } = grant.metadata;
        await cache.waitForGrant(namespace, name, (cached) => settledFor(cached, target), timeoutMs);
      }
      return report(policyId, cache.grantByUid(policyId), target);
    }),
  );
}

function currentCondition(grant: PolicyGrant) {
  const condition = grant.status?.conditions?.find((c) => c.type === ENFORCED_CONDITION);
  const current = condition && (condition.observedGeneration ?? 0) >= (grant.metadata.generation ?? 1);
  return current ? condition : undefined;
}

function settledFor(grant: PolicyGrant, target: WaitTarget): boolean {
  const condition = currentCondition(grant);
  if (!condition) return false;
  return target === 'revoked' ? condition.reason === 'Revoked' : SETTLED_REASONS.has(condition.reason);
}

function report(policyId: string, grant: PolicyGrant | undefined, target: WaitTarget): EnforcementReport {
  const condition = grant && currentCondition(grant);
  const done =
    condition !== undefined &&
    (target === 'enforced' ? condition.status === 'True' : condition.reason === 'Revoked');
  return {
    policyId,
    enforced: done,
    ...(condition ? { reason: condition.reason } : {}),
    ...(done && grant?.status?.zedToken ? { zedToken: grant.status.zedToken } : {}),
  };
}
