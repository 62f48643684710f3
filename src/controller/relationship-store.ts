import type { SpiceDBClient } from '../spicedb/client.js';

/** The part of SpiceDBClient that writes and reads relationships; a fake in unit tests. */
export type RelationshipStore = Pick<SpiceDBClient, 'writeRelationshipsInBatches' | 'readRelationships'>;

/** The part of SpiceDBClient that probes SpiceDB and keeps its schema. */
export type SchemaStore = Pick<SpiceDBClient, 'health' | 'ensureSchema'>;
