import type { Registry as MetricsRegistry } from 'prom-client';
import { counter, gauge } from '../observability/metrics.js';
import type { CacheEviction, CacheLookup, DecisionCacheEvents } from './decision-cache.js';
import type { RelationshipExpiries } from './relationship-expiries.js';

const LOOKUPS: readonly CacheLookup[] = ['hit', 'miss', 'shared'];
const EVICTIONS: readonly CacheEviction[] = ['capacity', 'expired', 'changed', 'dropped'];

export interface DecisionCacheGauges {
  entries: () => number;
  expiries: Pick<RelationshipExpiries, 'known' | 'size'>;
}

/**
 * `policygrant_decision_cache_lookups_total{outcome}`, `policygrant_decision_cache_evictions_total{reason}`,
 * `policygrant_decision_cache_entries`, `policygrant_decision_cache_expiries_known` and
 * `policygrant_decision_cache_expiring_relationships`.
 */
export function decisionCacheMetrics(
  registry: MetricsRegistry,
  { entries, expiries }: DecisionCacheGauges,
): DecisionCacheEvents {
  const lookups = counter(registry, {
    name: 'decision_cache_lookups_total',
    help:
      'Checks by where their answer came from: hit (remembered), shared (an identical check in flight), ' +
      'miss (asked SpiceDB). Checks while the Watch is not current, or SpiceDB quiet past ' +
      'REVISION_BARRIER_LIVENESS, are not looked up.',
    labelNames: ['outcome'],
  });
  const evictions = counter(registry, {
    name: 'decision_cache_evictions_total',
    help:
      'Remembered decisions forgotten, by reason: capacity (least recently used), expired (TTL), changed ' +
      '(a Watch change touched them), dropped (Watch not current, restarted, or schema changed).',
    labelNames: ['reason'],
  });
  gauge(registry, {
    name: 'decision_cache_entries',
    help: 'Decisions remembered (bounded by DECISION_CACHE_MAX_ENTRIES).',
    collect() {
      this.set(entries());
    },
  });
  gauge(registry, {
    name: 'decision_cache_expiries_known',
    help:
      "1 once the expiries of the items' relationships were read after the Watch started; until then an " +
      'allow is remembered at most SPICEDB_QUANTIZATION_INTERVAL.',
    collect() {
      this.set(expiries.known ? 1 : 0);
    },
  });
  gauge(registry, {
    name: 'decision_cache_expiring_relationships',
    help:
      'Expiry times the decision cache follows on items (grants and delegations; a revoked or renewed one ' +
      'until it is past, or until they are read again at twice what the last read found).',
    collect() {
      this.set(expiries.size);
    },
  });
  for (const outcome of LOOKUPS) lookups.inc({ outcome }, 0);
  for (const reason of EVICTIONS) evictions.inc({ reason }, 0);
  return {
    looked: (outcome) => lookups.inc({ outcome }),
    evicted: (reason, count) => evictions.inc({ reason }, count),
  };
}
