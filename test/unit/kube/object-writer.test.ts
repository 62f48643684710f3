import { describe, expect, it } from 'vitest';
import { finalizersPatch, statusUpdate } from '../../../src/kube/object-writer.js';

const cached = {
  apiVersion: 'acl.policygrant.dev/v1alpha1',
  kind: 'PolicyGrant',
  metadata: {
    name: 'g',
    namespace: 'ns',
    resourceVersion: '42',
    labels: { a: 'b' },
    managedFields: [{ manager: 'kubectl', operation: 'Update' }],
  },
  spec: { userId: 'u' },
  status: { state: 'PENDING' },
};

describe('writes of cached (stripped) objects', () => {
  it('a status update carries the object identity, its resourceVersion and the status, nothing else', () => {
    expect(statusUpdate(cached, { state: 'ACTIVE' })).toEqual({
      apiVersion: 'acl.policygrant.dev/v1alpha1',
      kind: 'PolicyGrant',
      metadata: { name: 'g', namespace: 'ns', resourceVersion: '42' },
      status: { state: 'ACTIVE' },
    });
  });

  it('a status update of a cluster-scoped object names no namespace', () => {
    const { namespace: _namespace, ...metadata } = cached.metadata;
    expect(statusUpdate({ ...cached, metadata }, {}).metadata).toEqual({ name: 'g', resourceVersion: '42' });
  });

  it('a finalizer patch sets the finalizers with the resourceVersion as precondition, no managedFields', () => {
    expect(finalizersPatch(cached, ['x'])).toEqual({
      metadata: { resourceVersion: '42', finalizers: ['x'] },
    });
  });
});
