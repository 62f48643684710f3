import { v1 } from '@authzed/authzed-node';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createTestNamespace, testKubeConfig, testSpiceDB, uniqueId } from '../support/cluster.js';

const group = 'acl.policygrant.dev';
const version = 'v1alpha1';

describe('the shared control plane is made of real parts', () => {
  it('creates a PolicyGrant through the real kube-apiserver and sees it on a watch', async () => {
    const kubeConfig = testKubeConfig();
    const namespace = await createTestNamespace('foundation');
    const name = uniqueId('grant');
    const seen = new Promise<{ phase: string; name: string }>((resolve, reject) => {
      void new Watch(kubeConfig)
        .watch(
          `/apis/${group}/${version}/namespaces/${namespace}/policygrants`,
          {},
          (phase, object: { metadata: { name: string } }) => resolve({ phase, name: object.metadata.name }),
          (error) => (error ? reject(error) : undefined),
        )
        .catch(reject);
    });
    await kubeConfig.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
      group,
      version,
      namespace,
      plural: 'policygrants',
      body: {
        apiVersion: `${group}/${version}`,
        kind: 'PolicyGrant',
        metadata: { name },
        spec: {
          policyType: 'INDIVIDUAL',
          userId: randomUUID(),
          itemId: 'urn:dx:item:foundation',
          itemType: 'DATABANK',
          expiryTime: '2099-01-01T00:00:00Z',
          constraints: { access: [{ accessType: 'api' }] },
        },
      },
    });
    await expect(seen).resolves.toEqual({ phase: 'ADDED', name });
  });

  it('writes a relationship to the real SpiceDB and checks it', async () => {
    const { endpoint, token } = testSpiceDB();
    const client = v1.NewClient(token, endpoint, v1.ClientSecurity.INSECURE_PLAINTEXT_CREDENTIALS).promises;
    // The global setup wrote the project's schema (src/spicedb/schema.zed): organization#member is the spec's.
    const [alice, organisationId] = [randomUUID(), randomUUID()];
    const reference = (objectType: string, objectId: string) =>
      v1.ObjectReference.create({ objectType, objectId });
    const written = await client.writeRelationships(
      v1.WriteRelationshipsRequest.create({
        updates: [
          v1.RelationshipUpdate.create({
            operation: v1.RelationshipUpdate_Operation.TOUCH,
            relationship: v1.Relationship.create({
              resource: reference('organization', organisationId),
              relation: 'member',
              subject: v1.SubjectReference.create({ object: reference('user', alice) }),
            }),
          }),
        ],
      }),
    );
    const check = (userId: string) =>
      client.checkPermission(
        v1.CheckPermissionRequest.create({
          resource: reference('organization', organisationId),
          permission: 'member',
          subject: v1.SubjectReference.create({ object: reference('user', userId) }),
          consistency: v1.Consistency.create({
            requirement: { oneofKind: 'atLeastAsFresh', atLeastAsFresh: written.writtenAt as v1.ZedToken },
          }),
        }),
      );
    expect((await check(alice)).permissionship).toBe(
      v1.CheckPermissionResponse_Permissionship.HAS_PERMISSION,
    );
    expect((await check(randomUUID())).permissionship).toBe(
      v1.CheckPermissionResponse_Permissionship.NO_PERMISSION,
    );
  });
});
