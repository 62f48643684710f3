import type { SpiceDBDatastore } from '../localplane/spicedb-server.js';
import type { LocalPostgres } from './local-postgres.js';

/** The database of the stack's PostgreSQL server that SpiceDB keeps its relationships in. */
export const DEV_SPICEDB_DATABASE = 'spicedb';

/** What SPICEDB_DATASTORE and SPICEDB_DATASTORE_URL ask for: `url` absent means the stack's own server. */
export type DatastoreChoice = { engine: 'memory' } | { engine: 'postgres'; url?: string };

/**
 * SPICEDB_DATASTORE: `memory` (default) or `postgres`; SPICEDB_DATASTORE_URL: an existing PostgreSQL database
 * for it (implies `postgres`). A bad value is an error naming the variable.
 */
export function datastoreChoice(env: NodeJS.ProcessEnv): DatastoreChoice {
  const url = env.SPICEDB_DATASTORE_URL || undefined;
  const engine = env.SPICEDB_DATASTORE || (url ? 'postgres' : 'memory');
  if (engine === 'memory') {
    if (url) throw new Error('SPICEDB_DATASTORE_URL is for SPICEDB_DATASTORE=postgres, not memory');
    return { engine };
  }
  if (engine !== 'postgres') throw new Error(`SPICEDB_DATASTORE must be memory or postgres, not "${engine}"`);
  if (url && !/^postgres(ql)?:\/\//.test(url)) {
    throw new Error('SPICEDB_DATASTORE_URL must be a postgres:// connection string');
  }
  return url ? { engine, url } : { engine };
}

/** The datastore SpiceDB is started on: the stack's own server gets a database `spicedb` (made once, kept). */
export async function spicedbDatastore(
  choice: DatastoreChoice,
  postgres: LocalPostgres,
): Promise<SpiceDBDatastore> {
  if (choice.engine === 'memory') return choice;
  return {
    engine: 'postgres',
    url: choice.url ?? (await (await postgres.server()).ensureDatabase(DEV_SPICEDB_DATABASE)),
  };
}
