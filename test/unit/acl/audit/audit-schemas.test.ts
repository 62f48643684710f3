import { describe, expect, it } from 'vitest';
import { AuditQuerySchema, TimeRangeQuerySchema } from '../../../../src/acl/audit/audit-schemas.js';
import { describeIssues } from '../../../../src/http/validation.js';

describe('audit time ranges', () => {
  // A field that fails its own schema keeps its text: the range rule must not read it as a date.
  it.each([
    ['the export and verify range', TimeRangeQuerySchema],
    ['the audit query', AuditQuerySchema],
  ])('%s names a bound that is not a date-time, whatever the other bound', (_name, schema) => {
    for (const query of [
      { from: '2000-01-01T00:00:00Z', to: 'null' },
      { from: 'null', to: '2000-01-01T00:00:00Z' },
    ]) {
      const parsed = schema.safeParse(query);
      expect(parsed.success).toBe(false);
      const bound = query.to === 'null' ? 'to' : 'from';
      expect(describeIssues(parsed.error as never)).toContain(`${bound} must be an ISO 8601 date-time`);
    }
  });

  it('still refuses a range whose end is not after its start', () => {
    const parsed = TimeRangeQuerySchema.safeParse({
      from: '2001-01-01T00:00:00Z',
      to: '2000-01-01T00:00:00Z',
    });
    expect(describeIssues(parsed.error as never)).toContain('to must be later than from');
  });
});
