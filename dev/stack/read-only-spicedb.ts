import type { LocalControlPlane } from '../localplane/control-plane.js';
import { startSpiceDB, type SpiceDBDatastore, type SpiceDBServer } from '../localplane/spicedb-server.js';

/**
 * The decision service's SpiceDB when the stack's own SpiceDB keeps its relationships in PostgreSQL: a second
 * SpiceDB on the same database with `--datastore-readonly` and a preshared key of its own, as the chart and
 * config/default deploy it, so that the decision service of `npm start` cannot write either. None on the memory
 * datastore, which lives inside the one SpiceDB process and cannot be shared (the decision service then uses that
 * SpiceDB's key, as in the chart's bundled mode), and none on another cluster, whose SpiceDB is the caller's.
 */
export async function startReadOnlySpiceDB(
  plane: LocalControlPlane | undefined,
  datastore: SpiceDBDatastore | undefined,
  log: (message: string) => void,
): Promise<SpiceDBServer | undefined> {
  if (!plane || datastore?.engine !== 'postgres') return undefined;
  log('starting the read-only SpiceDB the decision service checks through');
  return startSpiceDB({
    binary: plane.tools.spicedb,
    stateDir: plane.stateDir,
    name: 'spicedb-read-only',
    datastore,
    extraArgs: ['--datastore-readonly'],
  });
}
