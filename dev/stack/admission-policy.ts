import { KubernetesObjectApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import { readManifests } from './manifests.js';

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
