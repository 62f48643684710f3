import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { ACL_API_FIELD_MANAGER, CONTROLLER_FIELD_MANAGER } from '../../../../src/audit/field-managers.js';
import { grantChange, latestManager } from '../../../../src/controller/audit/grant-change.js';
import {
  actorSource,
  REQUESTER_ANNOTATION,
  UNKNOWN_DELETER,
  type ActorSource,
} from '../../../../src/controller/audit/kubernetes-actor.js';

const entry = (manager: string, time: string, extra: Partial<V1ManagedFieldsEntry> = {}) =>
  ({ manager, operation: 'Update', time, ...extra }) as unknown as V1ManagedFieldsEntry;

const target = { kind: 'policy', id: 'uid-1', itemId: 'urn:dx:item:1', organisationId: 'org-1' };

const ACL_API_USER = 'system:serviceaccount:policy-grant-system:policy-grant-operator-acl-api';
const STAMPED: ActorSource = { from: 'admission', aclApiUser: ACL_API_USER };
const UNSTAMPED: ActorSource = { from: 'field-manager' };

function grant(
  generation: number,
  managedFields: V1ManagedFieldsEntry[],
  deleted = false,
  requester?: string,
): PolicyGrant {
  return {
    metadata: {
      ...(requester === undefined ? {} : { annotations: { [REQUESTER_ANNOTATION]: requester } }),
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
  it('a creation with kubectl: policy.created keyed by uid and generation 1, the stamped requester as actor', () => {
    const change = grantChange(
      grant(1, [entry('kubectl-client-side-apply', '2026-01-01T00:00:01Z')], false, 'alice'),
      target,
      STAMPED,
    );
    expect(change).toEqual({
      key: 'uid-1/1',
      entry: {
        actor: { type: 'kubernetes', id: 'kubernetes:alice' },
        action: 'policy.created',
        target,
        outcome: { status: 201, detail: 'gitops/g generation 1' },
        requestId: 'kubernetes/uid-1/1',
      },
    });
  });

  it('a later generation is policy.changed with a key of its own', () => {
    const change = grantChange(
      grant(3, [entry('kubectl-edit', '2026-01-01T00:00:01Z')], false, 'alice'),
      target,
      STAMPED,
    );
    expect(change?.key).toBe('uid-1/3');
    expect(change?.entry).toMatchObject({ action: 'policy.changed', outcome: { status: 200 } });
  });

  it("a change stamped with the ACL API's identity is not recorded again, whatever its field manager", () => {
    const fields = [
      entry('kubectl-edit', '2026-01-01T00:00:01Z'),
      entry(CONTROLLER_FIELD_MANAGER, '2026-01-01T00:00:02Z'),
    ];
    expect(grantChange(grant(2, fields, false, ACL_API_USER), target, STAMPED)).toBeUndefined();
  });

  it("the ACL API's field manager alone is not the API: recorded under the stamp, or unverified", () => {
    const fields = [entry(ACL_API_FIELD_MANAGER, '2026-01-01T00:00:01Z')];
    expect(grantChange(grant(2, fields, false, 'mallory'), target, STAMPED)?.entry.actor).toEqual({
      type: 'kubernetes',
      id: 'kubernetes:mallory',
    });
    for (const [requester, source] of [
      [undefined, STAMPED],
      [ACL_API_USER, UNSTAMPED],
    ] as const) {
      expect(grantChange(grant(2, fields, false, requester), target, source)?.entry.actor).toEqual({
        type: 'kubernetes',
        id: `unverified-field-manager:${ACL_API_FIELD_MANAGER}`,
      });
    }
  });

  it('no actor id is ever a user id, whatever the field manager or the stamp say', () => {
    const victim = '7d1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d';
    const fields = [entry(victim, '2026-01-01T00:00:01Z')];
    const ids = [STAMPED, UNSTAMPED].flatMap((source) =>
      [undefined, victim].map((requester) => grantChange(grant(1, fields, false, requester), target, source)),
    );
    for (const change of ids) expect(change?.entry.actor.id).toMatch(/^[a-z-]+:/);
    expect(ids.map((change) => change?.entry.actor.id)).not.toContain(victim);
  });

  it('a deletion is recorded whoever made the grant, keyed by uid once, its deleter unknown', () => {
    // Neither the stamp nor a field manager names who deleted: never the maker of the grant's last spec.
    const made = [entry('kubectl-edit', '2026-01-01T00:00:01Z')];
    for (const [deleted, source] of [
      [grant(2, made, true, 'alice'), STAMPED],
      [grant(2, made, true, ACL_API_USER), STAMPED],
      [grant(2, made, true), UNSTAMPED],
    ] as const) {
      const change = grantChange(deleted, target, source);
      expect(change?.key).toBe('uid-1/deleted');
      expect(change?.entry).toMatchObject({
        actor: { type: 'kubernetes', id: UNKNOWN_DELETER },
        action: 'policy.deleted',
        outcome: { status: 200, detail: expect.stringContaining('gitops/g deleted') },
      });
    }
  });
});

describe('actorSource', () => {
  it('trusts the stamp only when told the admission policy stamps it, and then needs the API identity', () => {
    expect(actorSource({ AUDIT_ACTOR_FROM: 'field-manager' })).toEqual(UNSTAMPED);
    expect(actorSource({ AUDIT_ACTOR_FROM: 'admission', ACL_API_KUBERNETES_USER: ACL_API_USER })).toEqual(
      STAMPED,
    );
    expect(() => actorSource({ AUDIT_ACTOR_FROM: 'admission' })).toThrow(/ACL_API_KUBERNETES_USER/);
  });
});
