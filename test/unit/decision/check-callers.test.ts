import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/principal.js';
import {
  checkCallerRule,
  checkCallersRequirement,
  DEFAULT_CHECK_CALLERS,
  isCheckCaller,
} from '../../../src/decision/check-callers.js';
import type { CheckCallers } from '../../../src/decision/check-callers.js';
import { ORG_ID, USER_ID } from '../auth/support/tokens.js';

const user = (...roles: string[]): Principal => ({ kind: 'user', id: USER_ID, roles: new Set(roles) });
const application = (...roles: string[]): Principal => ({
  kind: 'application',
  id: 'gateway',
  clientId: 'gateway',
  roles: new Set(roles),
});
const serviceAccount = (namespace: string, name: string): Principal => ({
  kind: 'application',
  id: `system:serviceaccount:${namespace}:${name}`,
  clientId: `system:serviceaccount:${namespace}:${name}`,
  roles: new Set(),
  serviceAccount: `${namespace}:${name}`,
});

const LISTED: CheckCallers = { roles: ['decision_client'], serviceAccounts: ['data-plane:gateway'] };
const OWN_ROLE: CheckCallers = { roles: ['enforcer'], serviceAccounts: [] };

describe('isCheckCaller: only enforcement points may check', () => {
  it.each<[string, Principal, CheckCallers, boolean]>([
    ['an end user without roles', user(), DEFAULT_CHECK_CALLERS, false],
    ['an organisation admin', user('org_admin'), DEFAULT_CHECK_CALLERS, false],
    ['a platform admin', user('cos_admin'), DEFAULT_CHECK_CALLERS, false],
    ['a JWT with decision_client', user('decision_client'), DEFAULT_CHECK_CALLERS, true],
    [
      'a JWT with decision_client among others',
      user('org_admin', 'decision_client'),
      DEFAULT_CHECK_CALLERS,
      true,
    ],
    ['a JWT with decision_client when another role is configured', user('decision_client'), OWN_ROLE, false],
    ['a JWT with the configured role', user('enforcer'), OWN_ROLE, true],
    ['a Basic application without roles', application(), DEFAULT_CHECK_CALLERS, false],
    ['a Basic application with decision_client', application('decision_client'), DEFAULT_CHECK_CALLERS, true],
    ['a Basic application with another role', application('event_producer'), DEFAULT_CHECK_CALLERS, false],
    ['a listed ServiceAccount', serviceAccount('data-plane', 'gateway'), LISTED, true],
    ['an unlisted ServiceAccount', serviceAccount('data-plane', 'other'), LISTED, false],
    ['the same name in another namespace', serviceAccount('apps', 'gateway'), LISTED, false],
    [
      'any ServiceAccount when none is listed',
      serviceAccount('data-plane', 'gateway'),
      DEFAULT_CHECK_CALLERS,
      false,
    ],
    [
      'an application whose id looks like a listed ServiceAccount',
      { kind: 'application', id: 'system:serviceaccount:data-plane:gateway', roles: new Set() },
      LISTED,
      false,
    ],
  ])('%s → %s', (_case, principal, callers, expected) => {
    expect(isCheckCaller(principal, callers)).toBe(expected);
    expect(checkCallerRule(callers).admits(principal)).toBe(expected);
  });

  it('does not let an organisation claim stand in for the role', () => {
    expect(isCheckCaller({ ...user(), organisationId: ORG_ID }, DEFAULT_CHECK_CALLERS)).toBe(false);
  });
});

describe('checkCallersRequirement: the 403 says who may check', () => {
  it.each<[CheckCallers, string]>([
    [DEFAULT_CHECK_CALLERS, 'callers with the role decision_client'],
    [{ roles: ['a', 'b'], serviceAccounts: [] }, 'callers with the role a or b'],
    [LISTED, 'callers with the role decision_client and the listed ServiceAccounts'],
    [{ roles: [], serviceAccounts: ['apps:gateway'] }, 'the listed ServiceAccounts'],
    [{ roles: [], serviceAccounts: [] }, 'no caller (none is configured)'],
  ])('%j', (callers, who) => {
    expect(checkCallersRequirement(callers)).toBe(`only enforcement points may call the check: ${who}`);
  });

  it('never names the listed ServiceAccounts to a caller who is not one of them', () => {
    expect(checkCallersRequirement(LISTED)).not.toContain('data-plane');
  });
});
