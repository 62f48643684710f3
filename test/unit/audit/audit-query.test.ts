import { describe, expect, it } from 'vitest';
import { AuditQuerySchema } from '../../../src/acl/audit/audit-schemas.js';

describe('GET /audit filters', () => {
  it.each(['actor', 'action', 'itemId', 'policyId'])(
    'refuses a NUL character in %s, naming the field (PostgreSQL text cannot hold one)',
    (field) => {
      const parsed = AuditQuerySchema.safeParse({ [field]: 'a\u0000b' });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toEqual([field]);
    },
  );

  it('accepts other control characters and non-ASCII text', () => {
    expect(AuditQuerySchema.safeParse({ actor: 'Í\u0006=ô', policyId: 'é' }).success).toBe(true);
  });
});
