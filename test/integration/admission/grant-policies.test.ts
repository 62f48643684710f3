import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyGrant, ResourceDescriptor } from '../../../src/api/v1alpha1/index.js';
import { CREATED_BY_ACL_API, CREATED_BY_LABEL } from '../../../src/acl/policies/grant-names.js';
import { ACL_API_FIELD_MANAGER } from '../../../src/audit/field-managers.js';
import { REQUESTER_ANNOTATION } from '../../../src/controller/audit/kubernetes-actor.js';
import { until } from '../../../dev/wait/until.js';
import { NAMESPACE_RESOURCE } from '../../../src/kube/index.js';
import { uniqueId } from '../support/cluster.js';
import { TestObjects } from '../support/objects.js';
import { grantObject, grantPolicies, grantSpec, writeAs, type Write } from './grant-policies.js';

// The chart's admission policies on PolicyGrants on the real kube-apiserver. grant-marks: issuerId, revokedBy and
// the label acl.policygrant.dev/created-by are set, changed or removed by the ACL API's identity only, whatever
// the namespace (a GitOps grant cannot pose as issued or revoked by a user of the API, or as made by it).
// grant-requester: every create and spec change carries the requester the API server authenticated, whatever
// the client sent or its field manager says; a write that leaves the spec alone keeps the stamp.

const policies = grantPolicies();
const objects = new TestObjects();
const POLICY_BINDINGS: ResourceDescriptor = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural: 'validatingadmissionpolicybindings',
  namespaced: false,
};
let namespace: string;
/** A namespace where the stamp's check is bound and the mutating policy is not: the gate off, as it were. */
let unstamped: string;

beforeAll(async () => {
  namespace = uniqueId('grant-policies');
  unstamped = uniqueId('grant-unstamped');
  for (const name of [namespace, unstamped]) await objects.create(NAMESPACE_RESOURCE, { metadata: { name } });
  await policies.install([namespace]);
  await objects.create(POLICY_BINDINGS, {
    metadata: { name: unstamped },
    spec: {
      policyName: policies.requesterPolicy,
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': unstamped } } },
    },
  });
});

afterAll(async () => {
  await objects.delete(POLICY_BINDINGS, unstamped);
  await policies.remove();
  for (const name of [namespace, unstamped]) await objects.delete(NAMESPACE_RESOURCE, name);
});

const revocation = () => ({ revokedAt: new Date().toISOString(), revokedBy: randomUUID() });
const apiLabel = { labels: { [CREATED_BY_LABEL]: CREATED_BY_ACL_API } };

/** The ACL API's marks, each as a create would set it. */
const MARKS: Record<string, { spec?: Partial<PolicyGrant['spec']>; metadata?: object; field: string }> = {
  issuerId: { spec: { issuerId: randomUUID() }, field: 'spec.issuerId' },
  revokedBy: { spec: revocation(), field: 'spec.revokedBy' },
  'the created-by label': { metadata: apiLabel, field: `the label ${CREATED_BY_LABEL}` },
};

function create(user: string, extra: { spec?: object; metadata?: object } = {}, fieldManager?: string) {
  const grant = grantObject(namespace, uniqueId('grant'), grantSpec(extra.spec), extra.metadata);
  return writeAs(user, 'create', grant, fieldManager ? { fieldManager } : {});
}

function expectRefused(write: Write, user: string, field: string): void {
  expect(write.code).not.toBe(0);
  expect(write.stderr).toContain(`${user} may not set, change or remove ${field} of a PolicyGrant`);
}

describe('the ACL API marks (grant-marks)', () => {
  it.each(Object.keys(MARKS))(
    'a user other than the ACL API may not create a grant with %s',
    async (mark) => {
      const { field, ...extra } = MARKS[mark] as (typeof MARKS)[string];
      expectRefused(await create('gitops-user', extra, ACL_API_FIELD_MANAGER), 'gitops-user', field);
    },
  );

  it('a user other than the ACL API may not add, change or remove them on an existing grant', async () => {
    const plain = await create('gitops-user');
    const revoked = { ...plain.object, spec: { ...plain.object?.spec, ...revocation() } } as PolicyGrant;
    expectRefused(await writeAs('gitops-user', 'replace', revoked), 'gitops-user', 'spec.revokedBy');
    const labelled = { ...plain.object, metadata: { ...plain.object?.metadata, ...apiLabel } } as PolicyGrant;
    expectRefused(
      await writeAs('gitops-user', 'replace', labelled),
      'gitops-user',
      `the label ${CREATED_BY_LABEL}`,
    );

    const byApi = await create(policies.aclApiUser, { spec: { issuerId: randomUUID() }, metadata: apiLabel });
    expect(byApi.stderr).toBe('');
    const unmarked = structuredClone(byApi.object) as PolicyGrant;
    delete unmarked.metadata.labels;
    expectRefused(
      await writeAs('gitops-user', 'replace', unmarked),
      'gitops-user',
      `the label ${CREATED_BY_LABEL}`,
    );
  });

  it('the ACL API sets them, and anyone may write a grant without them or leave them as they are', async () => {
    const byApi = await create(policies.aclApiUser, { spec: { issuerId: randomUUID() }, metadata: apiLabel });
    expect(byApi.stderr).toBe('');
    const revoked = { ...byApi.object, spec: { ...byApi.object?.spec, ...revocation() } } as PolicyGrant;
    const revocationByApi = await writeAs(policies.aclApiUser, 'replace', revoked);
    expect(revocationByApi.stderr).toBe('');
    const plain = await create('gitops-user', { spec: { revokedAt: new Date().toISOString() } });
    expect(plain.stderr).toBe('');
    const relabelled = structuredClone(revocationByApi.object) as PolicyGrant;
    relabelled.metadata.labels = { ...relabelled.metadata.labels, team: 'a' };
    expect((await writeAs('gitops-user', 'replace', relabelled)).stderr).toBe('');
  });
});

describe('the requester stamp (grant-requester)', () => {
  const stampOf = (write: Write) => write.object?.metadata.annotations?.[REQUESTER_ANNOTATION];

  it('a create carries its requester, whatever the client stamped and its field manager', async () => {
    const forged = { annotations: { [REQUESTER_ANNOTATION]: policies.aclApiUser } };
    const created = await create('mallory', { metadata: forged }, ACL_API_FIELD_MANAGER);
    expect(created.stderr).toBe('');
    expect(stampOf(created)).toBe('mallory');
    const byUuid = await create('mallory', {}, randomUUID());
    expect(stampOf(byUuid)).toBe('mallory');
  });

  it('a spec change carries its requester; a write that leaves the spec alone keeps the stamp', async () => {
    const created = await create('alice');
    const relabelled = structuredClone(created.object) as PolicyGrant;
    relabelled.metadata.labels = { team: 'a' };
    relabelled.metadata.annotations = { [REQUESTER_ANNOTATION]: 'someone-else' };
    const kept = await writeAs('mallory', 'replace', relabelled, { fieldManager: ACL_API_FIELD_MANAGER });
    expect(kept.stderr).toBe('');
    expect(stampOf(kept)).toBe('alice');
    const changed = structuredClone(kept.object) as PolicyGrant;
    changed.spec.revokedAt = new Date().toISOString();
    const revoked = await writeAs('bob', 'replace', changed, { fieldManager: 'kubectl-edit' });
    expect(revoked.stderr).toBe('');
    expect(stampOf(revoked)).toBe('bob');
  });
});

describe('without the mutating policy in effect', () => {
  const write = (user: string, stamp?: string) => {
    const annotations = stamp === undefined ? {} : { annotations: { [REQUESTER_ANNOTATION]: stamp } };
    return writeAs(user, 'create', grantObject(unstamped, uniqueId('grant'), grantSpec(), annotations));
  };

  it("refuses a grant whose stamp is not its requester's, or that has none, rather than trust the client", async () => {
    const message = `annotation ${REQUESTER_ANNOTATION} of a PolicyGrant must name who created it`;
    // The binding is loaded asynchronously, like the policies: until it refuses the forged stamp.
    await until(async () => (await write('mallory', policies.aclApiUser)).code !== 0, 'the check to refuse');
    for (const forged of [await write('mallory', policies.aclApiUser), await write('mallory')]) {
      expect(forged.code).not.toBe(0);
      expect(forged.stderr).toContain(message);
    }
    expect((await write('mallory', 'mallory')).stderr).toBe('');
  });
});
