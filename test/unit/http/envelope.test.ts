import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  problemSchema,
  resultEnvelope,
  resultEnvelopeSchema,
  successEnvelope,
  successEnvelopeSchema,
} from '../../../src/http/envelope.js';
import { createUrnScheme, urnOf } from '../../../src/http/urn.js';

const acl = createUrnScheme('acl');
const authz = createUrnScheme('authz');

describe('success envelopes', () => {
  it('builds the ACL create envelope with results and detail', () => {
    const envelope = successEnvelope(acl, {
      title: 'Success',
      detail: '1 policy created',
      results: [{ policyId: 'p' }],
    });
    expect(envelope).toEqual({
      type: 'urn:dx:acl:Success',
      title: 'Success',
      detail: '1 policy created',
      results: [{ policyId: 'p' }],
    });
    const schema = successEnvelopeSchema(acl, { results: z.object({ policyId: z.string() }), detail: true });
    expect(schema.parse(envelope)).toEqual(envelope);
  });

  it('builds listings with paginationInfo', () => {
    const envelope = successEnvelope(acl, {
      title: 'Policies',
      results: [],
      paginationInfo: { offset: 0, limit: 50, totalHits: 0 },
    });
    expect(
      successEnvelopeSchema(acl, { results: z.object({}), paginated: true }).safeParse(envelope).success,
    ).toBe(true);
    expect(
      successEnvelopeSchema(acl, { results: z.object({}), paginated: true }).safeParse({
        ...envelope,
        paginationInfo: undefined,
      }).success,
    ).toBe(false);
  });

  it('puts the decision payload under result with the authz urn', () => {
    const envelope = resultEnvelope(authz, { title: 'Checked', result: { allowed: false } });
    expect(envelope).toEqual({ type: 'urn:dx:authz:Success', title: 'Checked', result: { allowed: false } });
    expect(resultEnvelopeSchema(authz, z.object({ allowed: z.boolean() })).parse(envelope)).toEqual(envelope);
  });

  it('rejects an envelope of another service', () => {
    const schema = successEnvelopeSchema(acl);
    expect(schema.safeParse(successEnvelope(authz, { title: 'x' })).success).toBe(false);
  });

  it('describes problem bodies', () => {
    expect(problemSchema.safeParse({ type: 'urn:dx:acl:Forbidden', title: 't', detail: 'd' }).success).toBe(
      true,
    );
    expect(problemSchema.safeParse({ type: 'urn:dx:acl:Forbidden', title: 't' }).success).toBe(false);
  });
});

describe('urn scheme', () => {
  it('defaults the namespace to dx and accepts another', () => {
    expect(urnOf(acl, 'Conflict')).toBe('urn:dx:acl:Conflict');
    expect(urnOf(createUrnScheme('acl', 'iudx'), 'Conflict')).toBe('urn:iudx:acl:Conflict');
  });

  it('rejects namespaces and service names that would break the urn', () => {
    expect(() => createUrnScheme('acl', 'has:colon')).toThrow(/namespace/);
    expect(() => createUrnScheme('acl', '')).toThrow(/namespace/);
    expect(() => createUrnScheme('a:b')).toThrow(/service/);
  });
});
