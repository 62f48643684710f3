import type { Registry as MetricsRegistry } from 'prom-client';
import { derivedState, PolicyGrantStateSchema } from '../../api/v1alpha1/index.js';
import { gauge } from '../../observability/metrics.js';
import type { AclCache } from '../acl-cache.js';

/**
 * `policygrant_acl_policy_grants{state}`: grants by derived state, counted from the informer cache at each
 * scrape.
 */
export function registerGrantMetrics(registry: MetricsRegistry, cache: AclCache, now: () => Date): void {
  gauge(registry, {
    name: 'acl_policy_grants',
    help: 'PolicyGrants in the cluster (all namespaces) by derived state: ACTIVE, DELETED or EXPIRED.',
    labelNames: ['state'],
    collect() {
      const at = now();
      const counts = new Map(PolicyGrantStateSchema.options.map((state) => [state, 0]));
      for (const grant of cache.allGrants()) {
        const state = derivedState(grant, at);
        counts.set(state, (counts.get(state) ?? 0) + 1);
      }
      for (const [state, count] of counts) this.set({ state }, count);
    },
  });
}
