import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalControlPlane } from '../../../src/localplane/control-plane.js';
import { SpiceDBClient } from '../../../src/spicedb/client.js';
import { readSchemaText } from '../../../src/spicedb/schema.js';
import type { ControlPlaneInfo } from './control-plane-info.js';

/**
 * One real control plane (etcd, kube-apiserver, SpiceDB) for the whole integration run; test files
 * isolate themselves by namespace and ids. USE_EXISTING_CLUSTER=true (envtest's switch) runs against
 * KUBECONFIG and SPICEDB_ENDPOINT/SPICEDB_TOKEN instead.
 */
export default async function setup(project: TestProject) {
  if (process.env.USE_EXISTING_CLUSTER === 'true') {
    project.provide('controlPlane', existingCluster());
    return;
  }
  const started = Date.now();
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-it-'));
  const plane = await startLocalControlPlane({ stateDir, log: (m) => console.log(`[control-plane] ${m}`) });
  await writeProjectSchema(plane.spicedb);
  console.log(`[control-plane] ready in ${Date.now() - started} ms; logs: ${plane.logFiles.join(', ')}`);
  project.provide('controlPlane', {
    kubeconfigPath: plane.kubeconfigPath,
    spicedbEndpoint: plane.spicedb?.endpoint ?? '',
    spicedbToken: plane.spicedb?.token ?? '',
    stateDir,
    logFiles: plane.logFiles,
    tools: { ...plane.tools },
  });
  return async () => {
    await plane.stop();
    // Logs stay for a look after a failure; the data does not.
    await rm(join(stateDir, 'etcd-data'), { recursive: true, force: true });
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
  };
}
