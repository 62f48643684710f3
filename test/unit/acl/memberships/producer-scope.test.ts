import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../../src/auth/principal.js';
import { HttpError } from '../../../../src/http/errors.js';
import { producerOrganisations, requireSpeaksFor } from '../../../../src/acl/memberships/producer-scope.js';

const [ORG_A, ORG_B] = ['0b9e4f1a-7c2d-4a8e-b3f6-5d1c9e2a7b40', '5d1c9e2a-7b40-4a8e-b3f6-0b9e4f1a7c2d'];

function caller(roles: string[], extra: Partial<Principal> = {}): Principal {
  return { kind: 'user', id: 'u', roles: new Set(roles), ...extra };
}

describe('producerOrganisations', () => {
  it.each([
    ['cos_admin', caller(['cos_admin']), 'every'],
    ['a platform producer', caller(['platform_event_producer']), 'every'],
    [
      'a JWT producer with an organisation claim',
      caller(['event_producer'], { organisationId: ORG_A }),
      [ORG_A],
    ],
    ['a JWT producer without one', caller(['event_producer']), []],
    [
      'a Basic producer: its organisations, not the organisationId it acts in',
      caller(['event_producer'], { kind: 'application', organisationId: ORG_A, organisations: [ORG_B] }),
      [ORG_B],
    ],
    ['a Basic producer without organisations', caller(['event_producer'], { kind: 'application' }), []],
  ])('%s', (_name, principal, expected) => {
    const organisations = producerOrganisations(principal);
    expect(organisations === 'every' ? 'every' : [...organisations]).toEqual(expected);
  });
});

describe('requireSpeaksFor', () => {
  it('names the field and organisation of the first foreign one, with 403', () => {
    const named = [
      { organisationId: ORG_A, field: '[0].data.organisationId' },
      { organisationId: ORG_B, field: '[1].data.organisationId' },
    ];
    const producer = caller(['event_producer'], { organisationId: ORG_A });
    let refusal: unknown;
    try {
      requireSpeaksFor(producer, named);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(HttpError);
    expect(refusal).toMatchObject({
      status: 403,
      title: 'Not bound to the organisation',
      detail: `[1].data.organisationId: this producer is not bound to organisation ${ORG_B}; nothing was applied`,
    });
    expect(() => requireSpeaksFor(caller(['platform_event_producer']), named)).not.toThrow();
    expect(() => requireSpeaksFor(producer, named.slice(0, 1))).not.toThrow();
  });
});
