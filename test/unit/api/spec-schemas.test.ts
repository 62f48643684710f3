import { describe, expect, it } from 'vitest';
import {
  CatalogItemSpecSchema,
  PolicyGrantRequestItemSchema,
  PolicyGrantSpecSchema,
} from '../../../src/api/v1alpha1/index.js';
import {
  catalogItemSpec,
  groupSpec,
  individualSpec,
  invalidCatalogItemSpecs,
  invalidPolicyGrantSpecs,
  validPolicyGrantSpecs,
  type InvalidSpecExample,
} from './spec-examples.js';

function issuesOf(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) {
  return (result.error?.issues ?? []).map((issue) => ({ path: issue.path, message: issue.message }));
}

function expectRejected(result: Parameters<typeof issuesOf>[0], example: InvalidSpecExample): void {
  expect(result.success).toBe(false);
  const issues = issuesOf(result);
  expect(issues).toContainEqual(
    example.ruleMessage
      ? { path: example.field, message: example.ruleMessage }
      : expect.objectContaining({ path: example.field }),
  );
  // One fault, one complaint: nothing else in the example is wrong.
  expect(issues).toHaveLength(1);
}

describe('PolicyGrantSpecSchema', () => {
  it.each(validPolicyGrantSpecs)('accepts: $name', ({ spec }) => {
    expect(issuesOf(PolicyGrantSpecSchema.safeParse(spec))).toEqual([]);
  });

  it.each(invalidPolicyGrantSpecs)('rejects $name, naming the field', (example) => {
    expectRejected(PolicyGrantSpecSchema.safeParse(example.spec), example);
  });

  it('returns the spec unchanged: no transforms, so what the CR holds is what the API validated', () => {
    for (const { spec } of validPolicyGrantSpecs) expect(PolicyGrantSpecSchema.parse(spec)).toEqual(spec);
  });
});

describe('PolicyGrantRequestItemSchema', () => {
  const { issuerId: _issuerId, ...requestItem } = individualSpec;

  it('accepts what a client sends, and drops the fields only the service may set', () => {
    const sent = { ...requestItem, issuerId: individualSpec.issuerId, revokedAt: '2026-01-01T00:00:00Z' };
    expect(PolicyGrantRequestItemSchema.parse(sent)).toEqual(requestItem);
    expect(PolicyGrantRequestItemSchema.parse(groupSpec)).toEqual(groupSpec);
  });

  it.each(invalidPolicyGrantSpecs.filter((example) => example.ruleMessage))(
    'applies the same rule: $name',
    (example) => {
      expectRejected(PolicyGrantRequestItemSchema.safeParse(example.spec), example);
    },
  );
});

describe('CatalogItemSpecSchema', () => {
  it('accepts a catalog item', () => {
    expect(CatalogItemSpecSchema.parse(catalogItemSpec)).toEqual(catalogItemSpec);
  });

  it.each(invalidCatalogItemSpecs)('rejects $name, naming the field', (example) => {
    expectRejected(CatalogItemSpecSchema.safeParse(example.spec), example);
  });
});
