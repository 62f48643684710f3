import type { AccessRequest } from '../../api/v1alpha1/index.js';
import type { AuditChange } from '../../audit/audit-store.js';

export const EXPIRED_ACTION = 'accessrequest.expired';

/**
 * The audit record of a request the controller expired, keyed by the request so that it is recorded once across
 * relists, restarts and failovers. The actor is the controller: no user decided.
 */
export function expiryChange(
  request: AccessRequest,
  expiredBy: string,
  organisationId: string | undefined,
): AuditChange {
  const id = request.metadata.uid ?? '';
  const key = `${id}/expired`;
  return {
    key,
    entry: {
      actor: { type: 'kubernetes', id: expiredBy },
      action: EXPIRED_ACTION,
      target: {
        kind: 'accessrequest',
        id,
        itemId: request.spec.itemId,
        ...(organisationId === undefined ? {} : { organisationId }),
      },
      outcome: { status: 200, detail: request.status?.reason ?? 'expired' },
      requestId: `kubernetes/${key}`,
    },
  };
}
