import { describe, expect, it } from 'vitest';
import { kubeRequestTarget, kubeSpan } from '../../../src/kube/kube-span.js';

const GROUP = '/apis/acl.policygrant.dev/v1alpha1';
const GRANTS_IN_ACL = `${GROUP}/namespaces/acl/policygrants`;
const GRANT_STATUS = { resource: 'policygrants', subresource: 'status', namespace: 'acl' };

describe('kubeRequestTarget', () => {
  it.each([
    ['POST', `${GRANTS_IN_ACL}`, {}, { verb: 'create', resource: 'policygrants', namespace: 'acl' }],
    ['GET', `${GRANTS_IN_ACL}/g-1`, {}, { verb: 'get', resource: 'policygrants', namespace: 'acl' }],
    ['GET', `${GROUP}/policygrants`, {}, { verb: 'list', resource: 'policygrants' }],
    ['GET', `${GROUP}/policygrants`, { watch: true }, { verb: 'watch', resource: 'policygrants' }],
    ['PUT', `${GRANTS_IN_ACL}/g-1/status`, {}, { ...GRANT_STATUS, verb: 'update' }],
    [
      'PATCH',
      '/apis/coordination.k8s.io/v1/namespaces/ns/leases/l',
      {},
      { verb: 'patch', resource: 'leases', namespace: 'ns' },
    ],
    [
      'DELETE',
      '/api/v1/namespaces/acl/events/e%201',
      {},
      { verb: 'delete', resource: 'events', namespace: 'acl' },
    ],
    [
      'DELETE',
      '/api/v1/namespaces/acl/events',
      {},
      { verb: 'deletecollection', resource: 'events', namespace: 'acl' },
    ],
    ['GET', '/api/v1/namespaces', {}, { verb: 'list', resource: 'namespaces' }],
    ['GET', '/api/v1/namespaces/acl', {}, { verb: 'get', resource: 'namespaces' }],
    ['POST', '/apis/authentication.k8s.io/v1/tokenreviews', {}, { verb: 'create', resource: 'tokenreviews' }],
    ['GET', '/version', {}, { verb: 'get', resource: '/version' }],
  ] as const)('%s %s', (method, path, query, target) => {
    expect(kubeRequestTarget(method, path, query)).toEqual(target);
  });
});

describe('kubeSpan', () => {
  it('names a client span by verb and resource, with the subresource and the namespace as attributes', () => {
    const span = kubeSpan('PUT', `${GRANTS_IN_ACL}/g-1/status`);
    expect(span).toMatchObject({
      name: 'update policygrants/status',
      attributes: {
        'http.request.method': 'PUT',
        'k8s.request.verb': 'update',
        'k8s.request.resource': 'policygrants',
        'k8s.request.subresource': 'status',
        'k8s.namespace.name': 'acl',
      },
    });
  });
});
