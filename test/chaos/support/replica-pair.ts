import type { KubeConfig } from '@kubernetes/client-node';
import {
  makeStateDir,
  Resources,
  startOwnSpiceDB,
  testControllerEnv,
  type OwnSpiceDB,
} from '../../integration/controller/support/harness.js';
import { controlPlane, testKubeConfig, uniqueId } from '../../integration/support/cluster.js';
import { ControllerReplica } from './controller-replica.js';
import { LeaseWatcher } from './fault-injector.js';

/** What a chaos test runs against: a SpiceDB and an ACL namespace of its own, two replicas, their Lease. */
export interface ReplicaPair {
  stateDir: string;
  spicedb: OwnSpiceDB;
  kubeConfig: KubeConfig;
  resources: Resources;
  aclNamespace: string;
  replicas: ControllerReplica[];
  lease: LeaseWatcher;
  stop(): Promise<void>;
}

/**
 * Starts two controller replicas (the real entrypoint, processes of their own, behind pausable proxies) on a
 * SpiceDB of the test's own, a label scope and an ACL namespace of its own: lease 4 s, resync 10 m (so no
 * periodic resync hides drift during the test). The Lease's holder is followed from outside.
 */
export async function startReplicaPair(name: string): Promise<ReplicaPair> {
  const stateDir = await makeStateDir(name);
  console.log(`[${name}] logs in ${stateDir}`);
  const spicedb = await startOwnSpiceDB(stateDir, `spicedb-${name}`);
  const scope = uniqueId(name);
  const kubeConfig = testKubeConfig();
  const resources = new Resources(kubeConfig, scope);
  const aclNamespace = await resources.namespace('acl');
  const env = testControllerEnv({
    spicedb: spicedb.server,
    aclNamespace,
    scope,
    logFile: '',
    env: { RESYNC_PERIOD: '10m', LOG_LEVEL: 'info' },
  });
  const replicas = await Promise.all(
    ['replica-a', 'replica-b'].map((replica) =>
      ControllerReplica.create({
        name: replica,
        stateDir,
        kubeconfigPath: controlPlane().kubeconfigPath,
        spicedbEndpoint: spicedb.server.endpoint,
        env,
      }),
    ),
  );
  await Promise.all(replicas.map((replica) => replica.start()));
  const lease = new LeaseWatcher(kubeConfig, aclNamespace, env.LEADER_ELECTION_ID as string);
  lease.start();
  return {
    stateDir,
    spicedb,
    kubeConfig,
    resources,
    aclNamespace,
    replicas,
    lease,
    async stop() {
      await lease.stop();
      await Promise.all(replicas.map((replica) => replica.stop()));
      await spicedb.stop();
      await resources.cleanUp();
    },
  };
}
