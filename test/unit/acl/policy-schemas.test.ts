import { describe, expect, it } from 'vitest';
import { CreateBodySchema, ListingQuerySchema } from '../../../src/acl/policy-schemas.js';
import { describeIssues } from '../../../src/http/validation.js';

const item = {
  policyType: 'INDIVIDUAL',
  userId: '0b5c3a9e-8f0e-4a59-9d0a-3f4b7c2e1d00',
  itemId: 'urn:dx:item:1',
  itemType: 'DATABANK',
  expiryTime: '2999-01-01T00:00:00Z',
  constraints: { access: [{ accessType: 'api' }] },
};

function problem(
  schema: { safeParse: (v: unknown) => { success: boolean; error?: unknown } },
  value: unknown,
) {
  const parsed = schema.safeParse(value);
  return parsed.success ? undefined : describeIssues(parsed.error as never);
}

describe('listing query', () => {
  it('defaults to limit 50, offset 0', () => {
    expect(ListingQuerySchema.parse({})).toEqual({ limit: 50, offset: 0 });
    expect(ListingQuerySchema.parse({ limit: '1000', offset: '7', status: 'EXPIRED' })).toEqual({
      limit: 1000,
      offset: 7,
      status: 'EXPIRED',
    });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ limit: '-1' }, 'limit'],
    [{ limit: '01' }, 'limit'],
    [{ limit: '1e3' }, 'limit'],
    [{ limit: ' 5' }, 'limit'],
    [{ limit: ['1', '2'] }, 'limit'],
    [{ offset: '-1' }, 'offset'],
    [{ offset: '1.0' }, 'offset'],
    [{ status: 'active' }, 'status'],
  ])('%j: a problem naming %s', (query, field) => {
    expect(problem(ListingQuerySchema, query)?.startsWith(`${field}: `)).toBe(true);
  });
});

describe('create body', () => {
  it('accepts 1 to 100 items', () => {
    expect(CreateBodySchema.safeParse({ request: [item] }).success).toBe(true);
    expect(problem(CreateBodySchema, { request: [] })).toMatch(/^request: /);
    expect(problem(CreateBodySchema, { request: Array(101).fill(item) })).toMatch(/^request: /);
  });

  it('rules that need the clock or only make sense in a request', () => {
    expect(problem(CreateBodySchema, { request: [{ ...item, expiryTime: '2001-01-01T00:00:00Z' }] })).toBe(
      'request[0].expiryTime: expiryTime must be in the future',
    );
    expect(
      problem(CreateBodySchema, {
        request: [
          {
            ...item,
            policyType: 'GROUP',
            constraints: { ...item.constraints, subjects: { allowedOrgIds: [item.userId] } },
          },
        ],
      }),
    ).toMatch(/^request\[0\]\.userId: userId must not be set when policyType is GROUP/);
    expect(
      problem(CreateBodySchema, {
        request: [
          { ...item, constraints: { ...item.constraints, subjects: { allowedOrgIds: [item.userId] } } },
        ],
      }),
    ).toMatch(/^request\[0\]\.constraints\.subjects: /);
  });

  it('drops the fields the service sets (issuerId, revokedAt, revokedBy)', () => {
    const parsed = CreateBodySchema.parse({
      request: [{ ...item, issuerId: item.userId, revokedAt: item.expiryTime }],
    });
    expect(parsed.request[0]).not.toHaveProperty('issuerId');
    expect(parsed.request[0]).not.toHaveProperty('revokedAt');
  });
});
