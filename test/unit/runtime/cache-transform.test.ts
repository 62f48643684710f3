import { describe, expect, it } from 'vitest';
import type { KubernetesObject } from '@kubernetes/client-node';
import { LAST_APPLIED_ANNOTATION, stripForCache } from '../../../src/runtime/cache-transform.js';

type Grant = KubernetesObject & { spec: Record<string, unknown>; status: Record<string, unknown> };

function appliedGrant(): Grant {
  return {
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    kind: 'PolicyGrant',
    metadata: {
      name: 'g',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '7',
      generation: 2,
      creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date,
      labels: { team: 'a' },
      finalizers: ['acl.policygrant.dev/relationships'],
      annotations: { [LAST_APPLIED_ANNOTATION]: '{"a very":"long copy"}', note: 'kept' },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'acl.policygrant.dev/v1alpha1',
          time: '2026-01-01T00:00:00Z' as unknown as Date,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:userId': {} } },
        },
        {
          manager: 'policy-grant-controller',
          operation: 'Update',
          apiVersion: 'acl.policygrant.dev/v1alpha1',
          time: '2026-01-01T00:00:01Z' as unknown as Date,
          subresource: 'status',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': { 'f:state': {} } },
        },
      ],
    },
    spec: { userId: 'user-1', itemId: 'item-1' },
    status: { state: 'ACTIVE', relationships: 1 },
  };
}

describe('stripForCache', () => {
  it("drops each managedFields entry's field set but keeps who changed the object, how and when", () => {
    const stripped = stripForCache(appliedGrant());
    expect(stripped.metadata?.managedFields).toEqual([
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'acl.policygrant.dev/v1alpha1',
        time: '2026-01-01T00:00:00Z',
      },
      {
        manager: 'policy-grant-controller',
        operation: 'Update',
        apiVersion: 'acl.policygrant.dev/v1alpha1',
        time: '2026-01-01T00:00:01Z',
        subresource: 'status',
      },
    ]);
  });

  it('drops the last-applied-configuration annotation and keeps every other one', () => {
    expect(stripForCache(appliedGrant()).metadata?.annotations).toEqual({ note: 'kept' });
  });

  it('leaves no empty annotations behind when last-applied-configuration was the only one', () => {
    const grant = appliedGrant();
    grant.metadata = { ...grant.metadata, annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } };
    expect(stripForCache(grant).metadata).not.toHaveProperty('annotations');
  });

  it('keeps identity, versions, labels, finalizers, spec and status whole', () => {
    const original = appliedGrant();
    const stripped = stripForCache(original);
    const { managedFields: _m, annotations: _a, ...metadata } = original.metadata ?? {};
    expect(stripped.metadata).toMatchObject(metadata);
    expect(stripped.spec).toEqual(original.spec);
    expect(stripped.status).toEqual(original.status);
    expect(stripped.apiVersion).toBe(original.apiVersion);
    expect(stripped.kind).toBe(original.kind);
  });

  it('does not change the object it is given', () => {
    const original = appliedGrant();
    const copy = structuredClone(original);
    stripForCache(original);
    expect(original).toEqual(copy);
  });

  it('makes the object much smaller', () => {
    const original = appliedGrant();
    expect(JSON.stringify(stripForCache(original)).length).toBeLessThan(
      JSON.stringify(original).length - 150,
    );
  });

  it('passes an object without metadata or managedFields through', () => {
    expect(stripForCache({ kind: 'X' })).toEqual({ kind: 'X' });
    expect(stripForCache({ metadata: { name: 'a' } })).toEqual({ metadata: { name: 'a' } });
  });
});
