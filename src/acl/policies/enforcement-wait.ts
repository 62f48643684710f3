import { z } from 'zod';
import { ENFORCED_CONDITION, type PolicyGrant } from '../../api/v1alpha1/index.js';
import type { AclCache } from '../acl-cache.js';
import type { ReplicaConfirmations } from '../decision-replicas/replica-confirmations.js';

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
        'Whether the controller reports this change enforced: the grant projected (create), its relationships ' +
          'gone (delete); with several decision replicas, also that every Ready replica confirmed it (decisionReplicas).',
      ),
    reason: z
      .string()
      .optional()
      .describe('The reason of the Enforced condition, when the controller has reported one.'),
    zedToken: z
      .string()
      .optional()
      .describe('SpiceDB consistency token of the projection; pass it to /v1/check as consistency_token.'),
    decisionReplicas: z
      .object({
        ready: z.int().min(0).describe('Ready decision replicas when the controller reported the change.'),
        passed: z
          .int()
          .min(0)
          .describe(
            'Those whose revision barrier confirmed the zedToken in time: every check they answer sees it.',
          ),
      })
      .optional()
      .describe(
        'When the ACL API knows the decision replicas: the change is enforced only once every Ready replica ' +
          'confirmed it (and at least one is Ready).',
      ),
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
 * projection. A check with that token cannot see the relationships as they were before the change. With `replicas`, a change is
 * enforced only once every Ready decision replica confirmed the token within the same `timeoutMs`: then a check
 * without a token, on any replica, sees it too.
 */
export async function awaitEnforcement(
  cache: Pick<AclCache, 'grantByUid' | 'waitForGrant'>,
  policyIds: readonly string[],
  target: WaitTarget,
  timeoutMs: number,
  replicas?: Pick<ReplicaConfirmations, 'confirm'>,
): Promise<EnforcementReport[]> {
  const deadline = performance.now() + timeoutMs;
  const confirmed = replicas && sharedConfirmations(replicas, deadline);
  return Promise.all(
    policyIds.map(async (policyId) => {
      const grant = cache.grantByUid(policyId);
      if (grant) {
        const { namespace = '', name = '' } = grant.metadata;
        await cache.waitForGrant(namespace, name, (cached) => settledFor(cached, target), timeoutMs);
      }
      const controllerReport = report(policyId, cache.grantByUid(policyId), target);
      return confirmed ? withReplicas(controllerReport, confirmed) : controllerReport;
    }),
  );
}

/** One confirmation per token: grants written in one SpiceDB call share it. */
function sharedConfirmations(replicas: Pick<ReplicaConfirmations, 'confirm'>, deadline: number) {
  const byToken = new Map<string, ReturnType<ReplicaConfirmations['confirm']>>();
  return (zedToken: string) => {
    const confirmation = byToken.get(zedToken) ?? replicas.confirm(zedToken, deadline);
    byToken.set(zedToken, confirmation);
    return confirmation;
  };
}

/**
 * The controller's report, enforced only if every Ready replica (at least one) passed its token. The token stays
 * in a report the replicas did not confirm: a check that carries it sees the change on any replica.
 */
async function withReplicas(
  controllerReport: EnforcementReport,
  confirmed: ReturnType<typeof sharedConfirmations>,
): Promise<EnforcementReport> {
  const { enforced, zedToken } = controllerReport;
  if (!enforced) return controllerReport;
  const decisionReplicas = zedToken === undefined ? { ready: 0, passed: 0 } : await confirmed(zedToken);
  const everyReplica = decisionReplicas.ready > 0 && decisionReplicas.passed === decisionReplicas.ready;
  return { ...controllerReport, enforced: everyReplica, decisionReplicas };
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
