import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { toStructuralSchema } from '../../../src/api/v1alpha1/structural-schema.js';

describe('toStructuralSchema', () => {
  it('keeps types, bounds, formats, descriptions and Kubernetes extensions', () => {
    const schema = z
      .object({
        names: z
          .array(z.string().max(5).describe('a name'))
          .max(3)
          .meta({ 'x-kubernetes-list-type': 'atomic' })
          .describe('names'),
        count: z.int().min(0).optional().describe('a count'),
      })
      .describe('root');
    expect(toStructuralSchema(schema)).toEqual({
      type: 'object',
      description: 'root',
      properties: {
        names: {
          type: 'array',
          description: 'names',
          maxItems: 3,
          items: { type: 'string', maxLength: 5, description: 'a name' },
          'x-kubernetes-list-type': 'atomic',
        },
        // z.int()'s own ±2^53 bounds are dropped; the declared minimum stays.
        count: { type: 'integer', minimum: 0, description: 'a count' },
      },
      required: ['names'],
    });
  });

  it('refuses a strict object: Kubernetes prunes unknown fields rather than rejecting them', () => {
    expect(() => toStructuralSchema(z.object({ inner: z.strictObject({ a: z.string() }) }))).toThrow(
      '.inner: "additionalProperties" cannot appear in a Kubernetes structural schema',
    );
  });

  it('refuses a union, which a structural schema cannot say', () => {
    expect(() => toStructuralSchema(z.object({ value: z.union([z.string(), z.int()]) }))).toThrow(
      '.value: "anyOf" cannot appear',
    );
  });

  it('refuses a node without a type', () => {
    expect(() => toStructuralSchema(z.object({ anything: z.unknown() }))).toThrow(
      '.anything: a structural schema needs a type',
    );
  });
});
