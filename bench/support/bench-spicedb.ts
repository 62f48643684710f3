import { startSpiceDB, type SpiceDBServer } from '../../dev/localplane/spicedb-server.js';
import { resolveToolPaths } from '../../dev/localplane/tool-paths.js';
import { SpiceDBClient } from '../../src/spicedb/client.js';
import { readSchemaText } from '../../src/spicedb/schema.js';

export interface BenchSpiceDB {
  server: SpiceDBServer;
  /** A client of it, the schema written; the caller closes it. */
  client: SpiceDBClient;
}

/** A SpiceDB of the benchmark's own (memory datastore, loopback, state in `stateDir`) with the project's schema. */
export async function startBenchSpiceDB(stateDir: string): Promise<BenchSpiceDB> {
  const server = await startSpiceDB({
    binary: (await resolveToolPaths()).spicedb,
    stateDir,
    name: 'spicedb-bench',
  });
  const client = new SpiceDBClient({
    endpoint: server.endpoint,
    token: server.token,
    transport: 'plaintext',
  });
  try {
    await client.ensureSchema(readSchemaText());
  } catch (error) {
    client.close();
    await server.process.stop();
    throw error;
  }
  return { server, client };
}
