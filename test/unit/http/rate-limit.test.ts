import { describe, expect, it } from 'vitest';
import { aclRouteClass } from '../../../src/acl/acl-route-classes.js';
import { describeRateLimit } from '../../../src/http/rate-limit/request-limits.js';
import { subjectKey } from '../../../src/http/rate-limit/subject-rate-limit.js';

describe('rate-limit keys and classes', () => {
  it('keys a subject by kind and id, so a user and an application of the same id count apart', () => {
    expect(subjectKey({ kind: 'user', id: 'a1' })).toBe('user:a1');
    expect(subjectKey({ kind: 'application', id: 'a1' })).toBe('application:a1');
  });

  it('classes ACL routes: GETs and verify read, the rest write', () => {
    expect(aclRouteClass({ method: 'get', operationId: 'listConsumerPolicies' })).toBe('read');
    expect(aclRouteClass({ method: 'post', operationId: 'verifyPolicy' })).toBe('read');
    expect(aclRouteClass({ method: 'post', operationId: 'createPolicy' })).toBe('write');
    expect(aclRouteClass({ method: 'delete', operationId: 'deletePolicy' })).toBe('write');
    expect(aclRouteClass({ method: 'put', operationId: 'replaceOrganisationMembers' })).toBe('write');
    expect(aclRouteClass({ method: 'post', operationId: 'postMemberEvents' })).toBe('write');
  });

  it('describes a limit in whole seconds', () => {
    expect(describeRateLimit({ requests: 3, windowMs: 60_000 })).toBe('3 requests per 60 s');
    expect(describeRateLimit({ requests: 1, windowMs: 500 })).toBe('1 requests per 1 s');
  });
});
