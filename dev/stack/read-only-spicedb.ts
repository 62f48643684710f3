import { startSpiceDB, type SpiceDBDatastore, type SpiceDBServer } from '../localplane/spicedb-server.js';

/** Where the stack's SpiceDB runs from: its binary and the control plane's state folder. */
export interface SpiceDBPlace {
  binary: string;
  stateDir: string;
}

/**
 * The decision service's SpiceDB when the stack's own SpiceDB keeps its relationships in PostgreSQL: a second
 * SpiceDB on the same database with `--datastore-readonly` and a preshared key of its own, as the chart and
 * config/default deploy it, so that the decision service of `npm start` cannot write either. None on the memory
 * datastore, which lives inside the one SpiceDB process and cannot be shared: the decision service then uses that
 * SpiceDB's key, as in the chart's bundled mode.
 */
export async function startReadOnlySpiceDB(
  datastore: SpiceDBDatastore,
  place: SpiceDBPlace,
  log: (message: string) => void,
): Promise<SpiceDBServer | undefined> {
  if (datastore.engine !== 'postgres') return undefined;
  log('starting the read-only SpiceDB the decision service checks through');
  return startSpiceDB({
    ...place,
    name: 'spicedb-read-only',
    datastore,
    extraArgs: ['--datastore-readonly'],
  });
}
