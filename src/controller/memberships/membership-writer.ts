import type { KubeConfig } from '@kubernetes/client-node';
import { API_GROUP, API_VERSION, MEMBERSHIP_PLURAL, type Membership } from '../../api/v1alpha1/index.js';
import { ProjectedWriter } from '../projected/projected-writer.js';

export function membershipsPath(namespace: string): string {
  return `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}/${MEMBERSHIP_PLURAL}`;
}

/** The controller's writes to Memberships: status and the relationships finalizer. */
export class MembershipWriter extends ProjectedWriter<Membership> {
  constructor(kubeConfig: KubeConfig) {
    super(kubeConfig, membershipsPath);
  }
}
