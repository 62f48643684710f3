import { CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import {
  API_GROUP,
  API_VERSION,
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  MEMBERSHIP_PLURAL,
  membershipName,
  type Membership,
  type MembershipKey,
} from '../../../src/api/v1alpha1/index.js';

/** One membership change as a producer reports it. */
export interface MembershipChange {
  kind: 'added' | 'removed';
  key: MembershipKey;
  at: Date;
}

/** Applies one change; the one place that decides how changes reach the cluster. */
export type MembershipWriter = (change: MembershipChange) => Promise<void>;

const isConflict = (error: unknown) => (error as { code?: number }).code === 409;

/**
 * Writes changes as Membership objects straight through the Kubernetes API: an added member is created under
 * its deterministic name, a removed one gets spec.removedAt (retried on 409 until it lands).
 */
export function kubeMembershipWriter(kubeConfig: KubeConfig, namespace: string): MembershipWriter {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const request = { group: API_GROUP, version: API_VERSION, namespace, plural: MEMBERSHIP_PLURAL };
  return async ({ kind, key, at }) => {
    const name = membershipName(key);
    if (kind === 'added') {
      const spec = { ...key, changedAt: at.toISOString() };
      await api.createNamespacedCustomObject({
        ...request,
        body: { apiVersion: GROUP_VERSION, kind: MEMBERSHIP_KIND, metadata: { name }, spec },
      });
      return;
    }
    for (;;) {
      const current = (await api.getNamespacedCustomObject({ ...request, name })) as Membership;
      const spec = { ...current.spec, removedAt: at.toISOString(), changedAt: at.toISOString() };
      try {
        await api.replaceNamespacedCustomObject({ ...request, name, body: { ...current, spec } });
        return;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  };
}

/** Every Membership of the namespace, read from the kube-apiserver itself. */
export async function listMemberships(kubeConfig: KubeConfig, namespace: string): Promise<Membership[]> {
  const api = kubeConfig.makeApiClient(CustomObjectsApi);
  const list = await api.listNamespacedCustomObject({
    group: API_GROUP,
    version: API_VERSION,
    namespace,
    plural: MEMBERSHIP_PLURAL,
  });
  return (list as { items: Membership[] }).items;
}
