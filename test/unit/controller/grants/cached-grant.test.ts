import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { latestManager } from '../../../../src/controller/audit/grant-change.js';
import { REQUESTER_ANNOTATION } from '../../../../src/controller/audit/kubernetes-actor.js';
import { grantCacheTransform } from '../../../../src/controller/grants/cached-grant.js';
import { nextGrantStatus, type GrantOutcome } from '../../../../src/controller/grants/grant-status.js';
import { finalizersPatch, statusUpdate } from '../../../../src/kube/object-writer.js';
import { LAST_APPLIED_ANNOTATION } from '../../../../src/runtime/cache-transform.js';
import { InternPool } from '../../../../src/runtime/index.js';
import { groupFields, NOW, policyGrant } from '../support/fakes.js';

const at = (time: string) => time as unknown as Date;

function fieldManager(
  manager: string,
  time: string,
  extra: Partial<V1ManagedFieldsEntry> = {},
): V1ManagedFieldsEntry {
  return {
    manager,
    operation: 'Update',
    apiVersion: 'acl.policygrant.dev/v1alpha1',
    time: at(time),
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:userId': {} } },
    ...extra,
  };
}

const ENFORCED: GrantOutcome = {
  kind: 'enforced',
  relationships: 1,
  projected: { resource: 'resource:x', relations: ['api_consumer'], subjects: ['user:u'] },
  zedToken: 'GhUKEzE3',
};

/** An enforced grant as the API server serves it: labels, annotations, managedFields with field sets, status. */
function servedGrant(
  name: string,
  managedFields: V1ManagedFieldsEntry[] = [fieldManager('policy-grant-acl-api', '2026-01-01T00:00:00Z')],
): PolicyGrant {
  const grant = policyGrant(
    name,
    { issuerId: '7d1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d' },
    {
      labels: { 'acl.policygrant.dev/created-by': 'acl-api' },
      annotations: { [LAST_APPLIED_ANNOTATION]: '{"a":"copy"}', 'acl.policygrant.dev/request-hash': 'f00d' },
      finalizers: ['acl.policygrant.dev/relationships'],
      deletionTimestamp: at('2026-01-02T00:00:00Z'),
      managedFields,
    },
  );
  return { ...grant, status: nextGrantStatus(grant, ENFORCED, NOW, { kind: 'aclNamespace' }).status };
}

/** The metadata a cached grant keeps, managedFields aside. */
const KEPT_METADATA = [
  'creationTimestamp',
  'deletionTimestamp',
  'finalizers',
  'generation',
  'name',
  'namespace',
  'resourceVersion',
  'uid',
] as const;

describe('grantCacheTransform', () => {
  it('keeps spec, status, identity, versions, finalizers and timestamps', () => {
    const served = servedGrant('g');
    const cached = grantCacheTransform(new InternPool())(structuredClone(served));
    expect(cached.apiVersion).toBe(served.apiVersion);
    expect(cached.kind).toBe(served.kind);
    expect(cached.spec).toEqual(served.spec);
    expect(cached.status).toEqual(served.status);
    for (const key of KEPT_METADATA) expect(cached.metadata[key]).toEqual(served.metadata[key]);
  });

  it('drops labels, annotations and the field sets of managedFields', () => {
    const cached = grantCacheTransform(new InternPool())(servedGrant('g'));
    const kept = Object.entries(cached.metadata).filter(([, value]) => value !== undefined);
    expect(kept.map(([key]) => key).sort()).toEqual([...KEPT_METADATA, 'managedFields'].sort());
    expect(cached.metadata.managedFields).toEqual([
      { manager: 'policy-grant-acl-api', operation: 'Update', time: '2026-01-01T00:00:00Z' },
    ]);
    for (const dropped of ['fieldsV1', LAST_APPLIED_ANNOTATION, 'created-by', 'request-hash'])
      expect(JSON.stringify(cached)).not.toContain(dropped);
  });

  it("keeps the requester's stamp alone of the annotations (the audit's actor)", () => {
    const served = servedGrant('g');
    served.metadata.annotations = { ...served.metadata.annotations, [REQUESTER_ANNOTATION]: 'alice' };
    const cached = grantCacheTransform(new InternPool())(served);
    expect(cached.metadata.annotations).toEqual({ [REQUESTER_ANNOTATION]: 'alice' });
  });

  it("keeps the latest change's managers only, and the audit names the same actor from them", () => {
    const histories: V1ManagedFieldsEntry[][] = [
      [
        fieldManager('kubectl-client-side-apply', '2026-01-01T00:00:00Z'),
        fieldManager('argocd-controller', '2026-01-01T00:00:05Z'),
        fieldManager('policy-grant-controller', '2026-01-01T00:00:09Z'),
        fieldManager('policy-grant-controller', '2026-01-01T00:00:09Z', { subresource: 'status' }),
      ],
      [
        fieldManager('policy-grant-acl-api', '2026-01-01T00:00:05Z'),
        fieldManager('kubectl-edit', '2026-01-01T00:00:05Z'),
        fieldManager('helm', '2026-01-01T00:00:01Z', { operation: 'Apply' }),
      ],
      [fieldManager('policy-grant-controller', '2026-01-01T00:00:09Z')],
    ];
    const transform = grantCacheTransform(new InternPool());
    for (const history of histories) {
      const cached = transform(servedGrant('g', history));
      expect(latestManager(cached.metadata.managedFields)).toBe(latestManager(history));
    }
    expect(transform(servedGrant('g', histories[0] ?? [])).metadata.managedFields).toEqual([
      { manager: 'argocd-controller', operation: 'Update', time: '2026-01-01T00:00:05Z' },
    ]);
  });

  it('shares the parts grants repeat, frozen, and never changes the grant it is given', () => {
    const transform = grantCacheTransform(new InternPool());
    const served = servedGrant('a', [fieldManager('policy-grant-acl-api', '2026-01-01T00:00:00Z')]);
    const copy = structuredClone(served);
    const [a, b] = [transform(served), transform(servedGrant('b'))];
    expect(served).toEqual(copy);
    expect(b.spec.constraints).toBe(a.spec.constraints);
    expect(b.status?.conditions).toBe(a.status?.conditions);
    expect(b.metadata.finalizers).toBe(a.metadata.finalizers);
    expect(b.metadata.managedFields).toBe(a.metadata.managedFields);
    expect(Object.isFrozen(a.spec.constraints.access)).toBe(true);
    expect(Object.isFrozen(a.status?.conditions?.[0])).toBe(true);
    const group = transform(policyGrant('c', groupFields(['org-1', 'org-2'])));
    expect(group.spec.constraints.subjects?.allowedOrgIds).toEqual(['org-1', 'org-2']);
  });

  it('is never sent back whole: a status update and a finalizer patch carry only what they change', () => {
    const cached = grantCacheTransform(new InternPool())(servedGrant('g'));
    const status = { ...cached.status, state: 'EXPIRED' as const };
    expect(statusUpdate(cached as PolicyGrant, status)).toEqual({
      apiVersion: cached.apiVersion,
      kind: cached.kind,
      metadata: {
        name: 'g',
        namespace: cached.metadata.namespace,
        resourceVersion: cached.metadata.resourceVersion,
      },
      status,
    });
    expect(finalizersPatch(cached as PolicyGrant, [])).toEqual({
      metadata: { resourceVersion: cached.metadata.resourceVersion, finalizers: [] },
    });
  });
});
