import type { KubeConfig } from '@kubernetes/client-node';
import {
  AGENT_PLURAL,
  API_GROUP,
  API_VERSION,
  DELEGATION_PLURAL,
  type Delegation,
} from '../../api/v1alpha1/index.js';
import { ProjectedWriter } from '../projected/projected-writer.js';

const namespacePath = (namespace: string) =>
  `/apis/${API_GROUP}/${API_VERSION}/namespaces/${encodeURIComponent(namespace)}`;

export function delegationsPath(namespace: string): string {
  return `${namespacePath(namespace)}/${DELEGATION_PLURAL}`;
}

export function agentsPath(namespace: string): string {
  return `${namespacePath(namespace)}/${AGENT_PLURAL}`;
}

/** The controller's writes to Delegations: status and the relationships finalizer. */
export class DelegationWriter extends ProjectedWriter<Delegation> {
  constructor(kubeConfig: KubeConfig) {
    super(kubeConfig, delegationsPath);
  }
}
