import { randomUUID } from 'node:crypto';
import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import {
  GROUP_VERSION,
  POLICY_GRANT_KIND,
  POLICY_GRANT_RESOURCE,
  type PolicyGrant,
} from '../../src/api/v1alpha1/index.js';
import { REQUESTER_ANNOTATION } from '../../src/controller/audit/kubernetes-actor.js';
import { collectionPath, KubeApiError, KubeClient } from '../../src/kube/index.js';
import { readManifests } from './manifests.js';
import { until } from '../wait/until.js';

/** The kinds of config/admission (and of the chart's admission templates). */
export const ADMISSION_KINDS = new Set([
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/**
 * The username config/admission names as the ACL API's (the ServiceAccount of the chart's default release in
 * policy-grant-system): the development stack runs its ACL API as this user, so that the grant policies let it
 * set its marks and the controller's audit knows its changes.
 */
export const DEV_ACL_API_USER = 'system:serviceaccount:policy-grant-system:policy-grant-operator-acl-api';

/**
 * Creates, or replaces with the current version, the admission policies and bindings of `dir` (config/admission:
 * only configured groups may bind a namespace to an organisation; only the ACL API sets its marks on grants; the
 * requester of each grant change is stamped for the audit). Answers their names.
 */
export async function applyAdmissionPolicies(kubeConfig: KubeConfig, dir: string): Promise<string[]> {
  const objects = (await readManifests(dir)).filter((object): object is KubernetesObject =>
    ADMISSION_KINDS.has((object as KubernetesObject).kind ?? ''),
  );
  const api = kubeConfig.makeApiClient(KubernetesObjectApi);
  for (const object of objects) await createOrReplace(api, object);
  return objects.map((object) => `${object.kind}/${object.metadata?.name}`);
}

async function createOrReplace(api: KubernetesObjectApi, object: KubernetesObject): Promise<void> {
  try {
    await api.create(object);
  } catch (error) {
    if ((error as { code?: number }).code !== 409) throw error;
    const existing = await api.read(object as KubernetesObject & { metadata: { name: string } });
    const resourceVersion = existing.metadata?.resourceVersion;
    await api.replace({ ...object, metadata: { ...object.metadata, resourceVersion } });
  }
}

const POLICIES_TIMEOUT_MS = 60_000;
const POLICIES_POLL_MS = 100;

/**
 * Waits until the apiserver enforces the grant policies just applied. It loads policies asynchronously, so a
 * grant written in between could meet the stamp's check before the stamp exists, or set the ACL API's marks
 * unchecked. A server-side dry run tells: the ACL API's grant comes back stamped with its user once the mutating
 * policy runs, and the admin's grant with `issuerId` is refused once the marks policy runs.
 */
export async function untilGrantPoliciesEnforced(
  admin: KubeConfig,
  aclApi: KubeConfig,
  namespace: string,
): Promise<void> {
  const asAdmin = new KubeClient(admin);
  const asAclApi = new KubeClient(aclApi);
  const enforced = async () =>
    (await stamped(asAclApi, namespace)) && (await marksRefused(asAdmin, namespace));
  try {
    await until(
      enforced,
      'the grant admission policies to be in effect',
      POLICIES_TIMEOUT_MS,
      POLICIES_POLL_MS,
    );
  } finally {
    asAdmin.close();
    asAclApi.close();
  }
}

function dryRunGrant(
  kube: KubeClient,
  namespace: string,
  spec: Record<string, unknown>,
): Promise<PolicyGrant> {
  return kube.call<PolicyGrant>({
    method: 'POST',
    path: collectionPath(POLICY_GRANT_RESOURCE, namespace),
    query: { dryRun: 'All' },
    body: {
      apiVersion: GROUP_VERSION,
      kind: POLICY_GRANT_KIND,
      metadata: { generateName: 'admission-probe-' },
      spec: {
        policyType: 'INDIVIDUAL',
        userId: randomUUID(),
        itemId: 'admission-probe',
        itemType: 'DATABANK',
        expiryTime: new Date(Date.now() + 86_400_000).toISOString(),
        constraints: { access: [{ accessType: 'api' }] },
        ...spec,
      },
    },
  });
}

async function stamped(asAclApi: KubeClient, namespace: string): Promise<boolean> {
  try {
    const grant = await dryRunGrant(asAclApi, namespace, {});
    return grant.metadata?.annotations?.[REQUESTER_ANNOTATION] === DEV_ACL_API_USER;
  } catch (error) {
    if (error instanceof KubeApiError) return false;
    throw error;
  }
}

async function marksRefused(asAdmin: KubeClient, namespace: string): Promise<boolean> {
  try {
    await dryRunGrant(asAdmin, namespace, { issuerId: randomUUID() });
    return false;
  } catch (error) {
    if (error instanceof KubeApiError) return error.statusCode === 403;
    throw error;
  }
}
