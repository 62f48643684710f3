import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HttpError } from '../../../src/http/errors.js';
import { describeIssues, fieldPath, parseRequestPart } from '../../../src/http/validation.js';

describe('fieldPath', () => {
  it('writes indexes in brackets and names with dots', () => {
    expect(fieldPath(['request', 0, 'constraints', 'access', 1, 'accessType'])).toBe(
      'request[0].constraints.access[1].accessType',
    );
  });

  it('quotes keys that are not plain names', () => {
    expect(fieldPath(['labels', 'a b'])).toBe('labels["a b"]');
    expect(fieldPath(['x-request-id'])).toBe('x-request-id');
  });
});

describe('parseRequestPart', () => {
  const schema = z.object({ user: z.object({ id: z.uuid() }), item: z.object({ itemId: z.string() }) });

  it('returns the parsed value', () => {
    const value = { user: { id: '3f8e0c4e-2a7b-4c55-9d61-0e9f3b1a2c7d' }, item: { itemId: 'urn:x' } };
    expect(parseRequestPart(schema, value, 'body')).toEqual(value);
  });

  it('throws a 400 naming every failing field', () => {
    const error = (() => {
      try {
        parseRequestPart(schema, { user: { id: 'nope' } }, 'body');
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({
      status: 400,
      detail: 'user.id: Invalid UUID; item: Invalid input: expected object, received undefined',
    });
  });

  it('names the part when the whole of it is wrong', () => {
    expect(() => parseRequestPart(schema, undefined, 'body')).toThrow(/^body: /);
  });

  it('reports a bounded number of issues', () => {
    const many = z.array(z.number()).safeParse(Array.from({ length: 8 }, () => 'x'));
    expect(many.success).toBe(false);
    if (!many.success) expect(describeIssues(many.error)).toMatch(/\[4\]: .*; and 3 more$/);
  });
});
