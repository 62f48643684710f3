import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { ACL_API_FIELD_MANAGER, CONTROLLER_FIELD_MANAGER } from '../../../../src/audit/field-managers.js';
import { grantChange, latestManager } from '../../../../src/controller/audit/grant-change.js';

const entry = (manager: string, time: string, extra: Partial<V1ManagedFieldsEntry> = {}) =>
  ({ manager, operation: 'Update', time, ...extra }) as unknown as V1ManagedFieldsEntry;

const target = { kind: 'policy', id: 'uid-1', itemId: 'urn:dx:item:1', organisationId: 'org-1' };

function grant(generation: number, managedFields: V1ManagedFieldsEntry[], deleted = false): PolicyGrant {
  return {
    metadata: {
      uid: 'uid-1',
      name: 'g',
      namespace: 'gitops',
      generation,
      managedFields,
      ...(deleted ? { deletionTimestamp: '2026-01-01T00:00:09Z' as unknown as Date } : {}),
    },
  } as PolicyGrant;
}

describe('latestManager', () => {
  it("takes the latest Update or Apply of the object, not of its status nor the controller's own", () => {
    const fields = [
      entry('kubectl-client-side-apply', '2026-01-01T00:00:01Z'),
      entry('argocd-controller', '2026-01-01T00:00:03Z', { operation: 'Apply' }),
      entry('someone', '2026-01-01T00:00:05Z', { subresource: 'status' }),
      entry(CONTROLLER_FIELD_MANAGER, '2026-01-01T00:00:07Z'),
    ];
    expect(latestManager(fields)).toBe('argocd-controller');
    expect(latestManager([])).toBeUndefined();
  });

  it('on a tie of seconds, takes a manager other than the ACL API', () => {
    const at = '2026-01-01T00:00:01Z';
    expect(latestManager([entry(ACL_API_FIELD_MANAGER, at), entry('kubectl-edit', at)])).toBe('kubectl-edit');
    expect(latestManager([entry('kubectl-edit', at), entry(ACL_API_FIELD_MANAGER, at)])).toBe('kubectl-edit');
  });

  it('names every other manager of the latest second: Kubernetes cannot tell which wrote last', () => {
    const at = '2026-01-01T00:00:01Z';
    expect(latestManager([entry('kubectl-edit', at), entry('kubectl-client-side-apply', at)])).toBe(
      'kubectl-client-side-apply,kubectl-edit',
    );
  });
});

describe('grantChange', () => {
  it('a creation with kubectl: policy.created keyed by uid and generation 1, the manager as actor', () => {
    const change = grantChange(
      grant(1, [entry('kubectl-client-side-apply', '2026-01-01T00:00:01Z')]),
      target,
    );
    expect(change).toEqual({
      key: 'uid-1/1',
      entry: {
        actor: { type: 'kubernetes', id: 'kubectl-client-side-apply' },
        action: 'policy.created',
        target,
        outcome: { status: 201, detail: 'gitops/g generation 1' },
        requestId: 'kubernetes/uid-1/1',
      },
    });
  });

  it('a later generation is policy.changed with a key of its own', () => {
    const change = grantChange(grant(3, [entry('kubectl-edit', '2026-01-01T00:00:01Z')]), target);
    expect(change?.key).toBe('uid-1/3');
    expect(change?.entry).toMatchObject({ action: 'policy.changed', outcome: { status: 200 } });
  });

  it('a change the ACL API made is not recorded again, even once the controller wrote its finalizer', () => {
    const fields = [
      entry(ACL_API_FIELD_MANAGER, '2026-01-01T00:00:01Z'),
      entry(CONTROLLER_FIELD_MANAGER, '2026-01-01T00:00:02Z'),
    ];
    expect(grantChange(grant(2, fields), target)).toBeUndefined();
  });

  it('a deletion is recorded whoever wrote the grant last, keyed by uid once', () => {
    const change = grantChange(
      grant(2, [entry(ACL_API_FIELD_MANAGER, '2026-01-01T00:00:01Z')], true),
      target,
    );
    expect(change?.key).toBe('uid-1/deleted');
    expect(change?.entry).toMatchObject({
      actor: { type: 'kubernetes', id: ACL_API_FIELD_MANAGER },
      action: 'policy.deleted',
      outcome: { status: 200, detail: expect.stringContaining('gitops/g deleted') },
    });
  });
});
