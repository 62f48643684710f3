import { describe, expect, it } from 'vitest';
import type { CatalogItem, PolicyGrant } from '../../../src/api/v1alpha1/index.js';
import type { Principal } from '../../../src/auth/principal.js';
import {
  lookupItem,
  mayCreateOn,
  mayLearnItemFacts,
  mayRevoke,
  mayVerify,
} from '../../../src/acl/authorisation.js';
import { DEFAULT_CHECK_CALLERS } from '../../../src/decision/check-callers.js';

const [ownerId, issuerId, consumerId, strangerId] = ['owner', 'issuer', 'consumer', 'stranger'];
const [org, otherOrg] = ['org-1', 'org-2'];

const item = (name = 'item-a'): CatalogItem => ({
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'CatalogItem',
  metadata: { name },
  spec: { itemId: 'urn:i', itemType: 'DATABANK', ownerId, organisationId: org, accessTypes: ['api'] },
});

const grant: PolicyGrant = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'PolicyGrant',
  metadata: { name: 'g' },
  spec: {
    policyType: 'INDIVIDUAL',
    userId: consumerId,
    itemId: 'urn:i',
    itemType: 'DATABANK',
    expiryTime: '2099-01-01T00:00:00Z',
    constraints: { access: [{ accessType: 'api' }] },
    issuerId,
  },
};

const principal = (
  id: string,
  roles: string[] = [],
  organisationId?: string,
  kind: Principal['kind'] = 'user',
): Principal => ({
  kind,
  id,
  roles: new Set(roles),
  ...(organisationId ? { organisationId } : {}),
});

describe('lookupItem', () => {
  it('tells found, missing and ambiguous apart, naming the ambiguous ones sorted', () => {
    expect(lookupItem([])).toEqual({ kind: 'missing' });
    expect(lookupItem([item()])).toMatchObject({ kind: 'found' });
    expect(lookupItem([item('b'), item('a')])).toEqual({ kind: 'ambiguous', names: ['a', 'b'] });
  });
});

describe('who learns the catalog facts about an itemId (authority before item facts)', () => {
  const foreign: CatalogItem = {
    ...item('item-b'),
    spec: { ...item().spec, ownerId: strangerId, organisationId: otherOrg },
  };
  it.each([
    ['the owner, one item', principal(ownerId), [item()], true],
    ['the owner, two items both theirs', principal(ownerId), [item('a'), item('b')], true],
    ['the owner, two items one of which is not theirs', principal(ownerId), [item(), foreign], false],
    ['the owner, no item', principal(ownerId), [], false],
    ['an org_admin of the organisation, one item', principal(strangerId, ['org_admin'], org), [item()], true],
    ['an org_admin of the organisation, no item', principal(strangerId, ['org_admin'], org), [], false],
    ['an org_admin of another organisation', principal(consumerId, ['org_admin'], otherOrg), [item()], false],
    ['a stranger', principal(consumerId), [item()], false],
    ['a stranger, no item', principal(consumerId), [], false],
    ['a cos_admin, no item', principal(consumerId, ['cos_admin']), [], true],
    ['a cos_admin, two items', principal(consumerId, ['cos_admin']), [item(), foreign], true],
  ])('%s: %s', (_name, caller, candidates, allowed) => {
    expect(mayLearnItemFacts(caller, candidates)).toBe(allowed);
  });
});

describe('create', () => {
  it.each([
    ['the owner', principal(ownerId), true],
    ['an org_admin of the item organisation', principal(strangerId, ['org_admin'], org), true],
    ['an org_admin of another organisation', principal(strangerId, ['org_admin'], otherOrg), false],
    ['a member of the organisation without the role', principal(strangerId, [], org), false],
    ['a cos_admin', principal(strangerId, ['cos_admin']), false],
    ['an org_admin without an organisation claim', principal(strangerId, ['org_admin']), false],
  ])('%s: %s', (_name, caller, allowed) => {
    expect(mayCreateOn(caller, item())).toBe(allowed);
  });
});

describe('revoke', () => {
  it.each([
    ['the issuer', principal(issuerId), true],
    ['the owner', principal(ownerId), true],
    ['an org_admin of the item organisation', principal(strangerId, ['org_admin'], org), true],
    ['a cos_admin', principal(strangerId, ['cos_admin']), true],
    ['the consumer', principal(consumerId), false],
    ['an org_admin of another organisation', principal(strangerId, ['org_admin'], otherOrg), false],
  ])('%s: %s', (_name, caller, allowed) => {
    expect(mayRevoke(caller, grant, item())).toBe(allowed);
  });

  it('an unknown or ambiguous item has no administrators: issuer and cos_admin only', () => {
    expect(mayRevoke(principal(ownerId), grant, undefined)).toBe(false);
    expect(mayRevoke(principal(issuerId), grant, undefined)).toBe(true);
    expect(mayRevoke(principal(strangerId, ['cos_admin']), grant, undefined)).toBe(true);
  });
});

describe('verify', () => {
  it.each([
    ['the user themself', principal(consumerId), true],
    ['the owner', principal(ownerId), true],
    ['an org_admin of the item organisation', principal(strangerId, ['org_admin'], org), true],
    ['a cos_admin', principal(strangerId, ['cos_admin']), true],
    [
      'an application with decision_client',
      principal('gateway', ['decision_client'], undefined, 'application'),
      true,
    ],
    ['a JWT with decision_client', principal(strangerId, ['decision_client']), true],
    [
      'an application without it',
      principal('reporting', ['event_producer'], undefined, 'application'),
      false,
    ],
    ['another user', principal(strangerId), false],
    ['an org_admin of another organisation', principal(strangerId, ['org_admin'], otherOrg), false],
  ])('%s: %s', (_name, caller, allowed) => {
    expect(mayVerify(caller, consumerId, item(), DEFAULT_CHECK_CALLERS)).toBe(allowed);
  });
});
