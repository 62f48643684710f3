import type { RelationshipUpdate, SpiceDBClient } from '../spicedb/client.js';

/** How the controller writes and reads relationships (FencedSpiceDB); a fake in unit tests. */
export interface RelationshipStore {
  /**
   * Writes in calls of at most SpiceDB's limit (each atomic, the whole not); returns the last ZedToken.
   * Refuses (FencedOffError) when this replica does not lead or `signal` has aborted.
   */
  writeRelationshipsInBatches(
    updates: readonly RelationshipUpdate[],
    signal?: AbortSignal,
  ): Promise<string | undefined>;
  readRelationships: SpiceDBClient['readRelationships'];
  /**
   * Makes sure the schema SpiceDB holds is the controller's (and, fenced, that this term's fence is set).
   * Refuses (FencedOffError) when this replica does not lead.
   */
  ensureSchema(): Promise<{ written: boolean }>;
}

/** The part of SpiceDBClient that probes SpiceDB. */
export type HealthProbe = Pick<SpiceDBClient, 'health'>;
