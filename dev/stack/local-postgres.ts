import { join } from 'node:path';
import { resolvePostgresBinaries } from '../localplane/postgres-binaries.js';
import { startPostgres, type PostgresServer } from '../localplane/postgres-server.js';

export interface LocalPostgres {
  /** The server, started on the first call; later calls share it. */
  server(): Promise<PostgresServer>;
  /** Stops it if it was started. */
  stop(): Promise<void>;
}

/**
 * The development stack's one PostgreSQL server, started only when a part needs it (the audit trail without
 * DATABASE_URL, SpiceDB on PostgreSQL without SPICEDB_DATASTORE_URL). Its data folder, `<stateDir>/postgres/`,
 * is kept across restarts: every database in it survives `npm start` after Ctrl-C.
 */
export function localPostgres(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  log: (m: string) => void,
): LocalPostgres {
  let starting: Promise<PostgresServer> | undefined;
  return {
    server() {
      starting ??= (async () => {
        log('starting PostgreSQL');
        return startPostgres({
          binaries: await resolvePostgresBinaries(env),
          stateDir: join(stateDir, 'postgres'),
        });
      })();
      return starting;
    },
    async stop() {
      const server = await starting?.catch(() => undefined);
      await server?.process.stop();
    },
  };
}
