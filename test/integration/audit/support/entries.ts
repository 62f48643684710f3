import type { AuditEntry } from '../../../../src/audit/audit-record.js';

/** The n-th of a series of distinct entries, as a test appends them. */
export const numberedEntry = (n: number): AuditEntry => ({
  actor: { type: 'user', id: `u${n}` },
  action: 'policy.created',
  target: { kind: 'policy', id: `p${n}` },
  outcome: { status: 201 },
  requestId: `r${n}`,
});
