import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalControlPlane } from '../../../src/localplane/control-plane.js';
import { resolvePostgresBinaries } from '../../../src/localplane/postgres-binaries.js';
import { startPostgres } from '../../../src/localplane/postgres-server.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import type { ControlPlaneInfo } from './control-plane-info.js';

/**
 * One real control plane (etcd, kube-apiserver, SpiceDB) and one PostgreSQL server for the whole integration
 * run; test files isolate themselves by namespace, ids and databases. USE_EXISTING_CLUSTER=true (envtest's
 * switch) runs against KUBECONFIG, SPICEDB_ENDPOINT/SPICEDB_TOKEN and TEST_DATABASE_URL instead.
 */
export default async function setup(project: TestProject) {
  if (process.env.USE_EXISTING_CLUSTER === 'true') {
    project.provide('controlPlane', existingCluster());
    return;
  }
  const started = Date.now();
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-it-'));
  const [plane, postgres] = await Promise.all([
    startLocalControlPlane({ stateDir, log: (m) => console.log(`[control-plane] ${m}`) }),
    startPostgres({ binaries: await resolvePostgresBinaries(), stateDir }),
  ]);
  await writeProjectSchema(plane.spicedb);
  console.log(`[control-plane] ready in ${Date.now() - started} ms; logs: ${plane.logFiles.join(', ')}`);
  project.provide('controlPlane', {
    kubeconfigPath: plane.kubeconfigPath,
    spicedbEndpoint: plane.spicedb?.endpoint ?? '',
    spicedbToken: plane.spicedb?.token ?? '',
    stateDir,
    logFiles: [...plane.logFiles, postgres.process.logFile],
    tools: { ...plane.tools },
    postgresUrl: postgres.url,
  });
  return async () => {
    await Promise.all([plane.stop(), postgres.process.stop()]);
    // Logs stay for a look after a failure; the data does not.
    for (const data of ['etcd-data', 'postgres-data']) {
      await rm(join(stateDir, data), { recursive: true, force: true });
    }
  };
}

/** Every test file shares SpiceDB, and a SpiceDB schema is global: write the project's once, here. */
async function writeProjectSchema(spicedb: { endpoint: string; token: string } | undefined): Promise<void> {
  if (!spicedb) return;
  const client = new SpiceDBClient({
    endpoint: spicedb.endpoint,
    token: spicedb.token,
    transport: 'plaintext',
  });
  try {
    await client.ensureSchema(readSchemaText());
  } finally {
    client.close();
  }
}

function existingCluster(): ControlPlaneInfo {
  const required = (name: string) => {
    const value = process.env[name];
    if (!value) throw new Error(`USE_EXISTING_CLUSTER=true needs ${name}`);
    return value;
  };
  return {
    kubeconfigPath: required('KUBECONFIG'),
    spicedbEndpoint: required('SPICEDB_ENDPOINT'),
    spicedbToken: required('SPICEDB_TOKEN'),
    stateDir: '',
    logFiles: [],
    tools: {},
    postgresUrl: required('TEST_DATABASE_URL'),
  };
}
