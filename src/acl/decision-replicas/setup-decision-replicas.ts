import type { AclDeps } from '../acl-deps.js';
import { staticReplicas, type DecisionReplicas } from './decision-replicas.js';
import { endpointSliceReplicas } from './endpoint-slice-replicas.js';
import { ReplicaConfirmations } from './replica-confirmations.js';

/** The decision replicas `Prefer: wait` asks to confirm a change, and the confirmations; none configured: none. */
export function setupDecisionReplicas(
  deps: AclDeps,
): { replicas: DecisionReplicas; confirmations: ReplicaConfirmations } | undefined {
  const { config, kube, logger, metricsRegistry } = deps;
  const source = config.decisionReplicas;
  if (!source) return undefined;
  const replicas =
    source.kind === 'static'
      ? staticReplicas(source.urls)
      : endpointSliceReplicas({
          kube,
          namespace: config.namespace,
          service: source.name,
          portName: source.portName,
          logger,
        });
  return { replicas, confirmations: new ReplicaConfirmations({ replicas, logger, metricsRegistry }) };
}
