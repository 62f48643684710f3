import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/principal.js';
import {
  checkCallerRule,
  checkCallersRequirement,
  DEFAULT_CHECK_CALLERS,
  DEFAULT_SEARCH_CALLERS,
  evaluationScope,
  isCheckCaller,
  PLATFORM_SEARCH_CLIENT_ROLE,
  SEARCH_CLIENT_ROLE,
  searchCallerRule,
  searchScope,
} from '../../../src/decision/check-callers.js';
import type { CheckCallers, SearchCallers } from '../../../src/decision/check-callers.js';
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

describe('searchScope and evaluationScope: searches are a tenant boundary', () => {
  const OTHER_ORG = '5e0c7a7e-0c4b-4f7e-9d1a-3b2c1d0e9f8a';
  const SEARCHERS: SearchCallers = {
    roles: [SEARCH_CLIENT_ROLE],
    platformRoles: [PLATFORM_SEARCH_CLIENT_ROLE],
    platformServiceAccounts: ['data-plane:indexer'],
  };
  const bound = (principal: Principal, ...organisations: string[]): Principal =>
    principal.kind === 'application'
      ? { ...principal, organisations }
      : { ...principal, organisationId: organisations[0] as string };

  it.each<[string, Principal, SearchCallers, ReturnType<typeof searchScope>]>([
    [
      'nobody searches by default, not even an enforcement point',
      user('decision_client'),
      DEFAULT_SEARCH_CALLERS,
      undefined,
    ],
    ['a search client bound to no organisation', user(SEARCH_CLIENT_ROLE), SEARCHERS, undefined],
    ['a check caller bound to an organisation', bound(user('decision_client'), ORG_ID), SEARCHERS, undefined],
    [
      'a JWT search client with an organisation claim',
      bound(user(SEARCH_CLIENT_ROLE), ORG_ID),
      SEARCHERS,
      new Set([ORG_ID]),
    ],
    [
      'a Basic search client with organisations',
      bound(application(SEARCH_CLIENT_ROLE), ORG_ID, OTHER_ORG),
      SEARCHERS,
      new Set([ORG_ID, OTHER_ORG]),
    ],
    ['a platform search client', user(PLATFORM_SEARCH_CLIENT_ROLE), SEARCHERS, 'every'],
    [
      'a platform search client bound to an organisation',
      bound(user(PLATFORM_SEARCH_CLIENT_ROLE), ORG_ID),
      SEARCHERS,
      'every',
    ],
    ['a listed ServiceAccount', serviceAccount('data-plane', 'indexer'), SEARCHERS, 'every'],
    ['an unlisted ServiceAccount', serviceAccount('data-plane', 'gateway'), SEARCHERS, undefined],
  ])('%s', (_case, principal, callers, expected) => {
    expect(searchScope(principal, callers)).toEqual(expected);
    expect(searchCallerRule(callers).admits(principal)).toBe(expected !== undefined);
  });

  it('scopes the evaluations of a caller bound to organisations, and of no other', () => {
    expect(evaluationScope(bound(user('decision_client'), ORG_ID), SEARCHERS)).toEqual(new Set([ORG_ID]));
    expect(evaluationScope(bound(application('decision_client'), OTHER_ORG), SEARCHERS)).toEqual(
      new Set([OTHER_ORG]),
    );
    expect(evaluationScope(user('decision_client'), SEARCHERS)).toBe('every');
    expect(evaluationScope(bound(user(PLATFORM_SEARCH_CLIENT_ROLE), ORG_ID), SEARCHERS)).toBe('every');
  });

  it('says who may search in the 403', () => {
    expect(searchCallerRule(DEFAULT_SEARCH_CALLERS).requirement).toMatch(/no caller \(none is configured\)$/);
    expect(searchCallerRule(SEARCHERS).requirement).toBe(
      'only enforcement points configured to search may search: callers with the role search_client bound to ' +
        'organisations, callers with the role platform_search_client, the listed ServiceAccounts',
    );
  });
});
