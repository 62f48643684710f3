import { decisionReplicaCount, devSearchEnv } from './decision-env.js';
import type { KubeConfig } from '@kubernetes/client-node';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ensureDevSigningKey } from '../tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../tokens/dev-token.js';
import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import {
  collectionPath,
  isAlreadyExists,
  KubeClient,
  loadKubeConfig,
  NAMESPACE_RESOURCE,
} from '../../src/kube/index.js';
import { startLocalControlPlane, type LocalControlPlane } from '../localplane/control-plane.js';
import { repoRoot } from '../localplane/repo-root.js';
import type { SpiceDBDatastore } from '../localplane/spicedb-server.js';
import { applyAdmissionPolicies, DEV_ACL_API_USER, untilGrantPoliciesEnforced } from './admission-policy.js';
import { prepareAuditDatabase, type AuditDatabase } from './audit-database.js';
import { inProcessServices } from './in-process-services.js';
import { localPostgres } from './local-postgres.js';
import { applySampleCatalogItems } from './samples.js';
import type { LaunchedService, ServiceLauncher } from './service-launcher.js';
import { startReadOnlySpiceDB } from './read-only-spicedb.js';
import { datastoreChoice, spicedbDatastore } from './spicedb-datastore.js';
import { writeStateFile, type DevStackEnv } from './state-file.js';

export interface DevStackOptions {
  /** `.dev/` by default: kubeconfig, signing key, logs and the `env` file. */
  stateDir: string;
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
  /** How the three services run: in this process unless told otherwise (`serviceProcesses`). */
  services?: ServiceLauncher;
}

/** A process of the stack: etcd, kube-apiserver and SpiceDB on its own control plane, and each service. */
export interface StackProcess {
  name: string;
  pid: number;
  /** A service's Prometheus endpoint. */
  metricsUrl?: string;
}

export interface RunningDevStack {
  env: DevStackEnv;
  aclDocsUrl: string;
  sampleItem: CatalogItem | undefined;
  /** Every decision replica (DEV_DECISION_REPLICAS); the first is DECISION_URL. */
  decisionUrls: string[];
  /** Services that run in this process carry its pid. */
  processes: StackProcess[];
  stop(): Promise<void>;
}

interface Stoppable {
  stop(): Promise<void>;
}

const FIRST_RESYNC_TIMEOUT_MS = 120_000;

/**
 * The whole system on one machine (docs/architecture.md, "The development stack"): the local control plane
 * and SpiceDB (on SPICEDB_DATASTORE) unless KUBECONFIG names a cluster, PostgreSQL for the audit trail unless
 * DATABASE_URL names one (and for SpiceDB on postgres unless SPICEDB_DATASTORE_URL does), the CRDs, the sample
 * CatalogItems, and the three services (in this process unless `services` says otherwise). The `env` file is
 * written last and removed first (at start, whatever an earlier run left, and at stop), so its presence means
 * the stack is ready.
 */
/** The services' audit settings: the writer's connection and the chain key; the stack migrated already. */
function auditEnv(audit: AuditDatabase): NodeJS.ProcessEnv {
  return {
    DATABASE_URL: audit.serviceUrl,
    DATABASE_MIGRATION_URL: undefined,
    AUDIT_MIGRATIONS: 'skip',
    AUDIT_CHAIN_KEY: audit.chainKey,
  };
}

export async function startDevStack(options: DevStackOptions): Promise<RunningDevStack> {
  const { stateDir, env, log, services = inProcessServices } = options;
  const envFile = join(stateDir, 'env');
  const running: Stoppable[] = [];
  const stop = async () => {
    await rm(envFile, { force: true });
    for (const part of running.reverse())
      await part.stop().catch((error: unknown) => log(`stop failed: ${String(error)}`));
  };
  try {
    const choice = datastoreChoice(env);
    await mkdir(stateDir, { recursive: true });
    await rm(envFile, { force: true });
    // Stopped last: SpiceDB may keep its data there.
    const postgres = localPostgres(stateDir, env, log);
    running.push(postgres);
    const cluster = await clusterFor(stateDir, env, log, () => spicedbDatastore(choice, postgres));
    if (cluster.plane) running.push(cluster.plane);
    // On another cluster (no plane of ours) the SpiceDB, and so its keys, are the caller's.
    const readOnly =
      cluster.plane && cluster.datastore
        ? await startReadOnlySpiceDB(
            cluster.datastore,
            { binary: cluster.plane.tools.spicedb, stateDir: cluster.plane.stateDir },
            log,
          )
        : undefined;
    if (readOnly) running.push(readOnly.process);
    const namespace = env.ACL_NAMESPACE ?? 'policy-grant-system';
    await ensureNamespace(cluster.kubeConfig, namespace);
    if (cluster.plane) await installAdmissionPolicies(cluster.kubeConfig, log);
    const audit = await prepareAuditDatabase(postgres, stateDir, env, log);
    const key = await ensureDevSigningKey(stateDir);
    const serviceEnv: NodeJS.ProcessEnv = {
      LOG_LEVEL: 'warn',
      ...env,
      KUBECONFIG: cluster.kubeconfigPath,
      ACL_NAMESPACE: namespace,
      LEADER_ELECTION_NAMESPACE: env.LEADER_ELECTION_NAMESPACE ?? namespace,
      JWKS_FILE: key.jwksPath,
      JWKS_URL: undefined,
      JWT_ISSUER: env.JWT_ISSUER ?? DEV_TOKEN_ISSUER,
      JWT_AUDIENCE: env.JWT_AUDIENCE ?? DEV_TOKEN_AUDIENCE,
      // A development stack listens on loopback only, unless told otherwise.
      ACL_HOST: env.ACL_HOST ?? '127.0.0.1',
      DECISION_HOST: env.DECISION_HOST ?? '127.0.0.1',
      CONTROLLER_HOST: env.CONTROLLER_HOST ?? '127.0.0.1',
      ACL_PORT: env.ACL_PORT ?? '8080',
      DECISION_PORT: env.DECISION_PORT ?? '8081',
      CONTROLLER_PORT: env.CONTROLLER_PORT ?? '8082',
    };
    // The controller and the decision service talk to SpiceDB; the ACL API does not, and gets no credential.
    const spicedbClientEnv: NodeJS.ProcessEnv = {
      ...serviceEnv,
      SPICEDB_ENDPOINT: cluster.spicedb.endpoint,
      SPICEDB_TOKEN: cluster.spicedb.token,
      SPICEDB_TLS: env.SPICEDB_TLS ?? (cluster.plane ? 'plaintext' : undefined),
    };
    const identity = await aclApiIdentity(cluster, namespace);
    log('starting the controller');
    // It records grant changes made with kubectl in the audit trail, as the services' role.
    const controllerEnv = { ...spicedbClientEnv, ...auditEnv(audit), ...identity.controllerEnv };
    const controller = await services.controller(controllerEnv);
    running.push(controller);
    const searchEnv = { ...spicedbClientEnv, ...devSearchEnv(env) };
    const decisionEnv = readOnly
      ? { ...searchEnv, SPICEDB_ENDPOINT: readOnly.endpoint, SPICEDB_TOKEN: readOnly.token }
      : searchEnv;
    const decisions = await startDecisionReplicas(services, decisionEnv, decisionReplicaCount(env), {
      log,
      running,
    });
    const [decision] = decisions;
    log('starting the ACL API');
    const aclEnv = {
      ...serviceEnv,
      ...auditEnv(audit),
      ...identity.aclEnv,
      // Prefer: wait answers once every decision replica of the stack passed the change.
      ...(env.DECISION_SERVICE ? {} : { DECISION_REPLICAS: decisions.map(({ url }) => url).join(',') }),
    };
    const acl = await services.aclApi(aclEnv);
    running.push(acl);
    // Only on our own control plane: on another cluster, a replica deployed there may lead for good.
    if (cluster.plane) {
      log("waiting for the controller's first resync");
      await controller.waitForFirstResync(FIRST_RESYNC_TIMEOUT_MS);
    }
    const samples = await applySampleCatalogItems(cluster.kubeConfig, join(repoRoot(), 'config/samples'));
    const stackEnv: DevStackEnv = {
      KUBECONFIG: cluster.kubeconfigPath,
      ACL_URL: acl.url,
      DECISION_URL: decision.url,
      CONTROLLER_URL: controller.url,
      SPICEDB_ENDPOINT: cluster.spicedb.endpoint,
      SPICEDB_TOKEN: cluster.spicedb.token,
      NAMESPACE: namespace,
      DATABASE_URL: audit.ownerUrl,
    };
    await writeStateFile(envFile, stackEnv);
    const processes: StackProcess[] = [
      ...[...(cluster.plane?.processes() ?? []), ...(readOnly ? [readOnly.process] : [])].map(
        ({ name, pid }) => ({ name, pid }),
      ),
      ...[controller, ...decisions, acl].map(({ name, pid, rootUrl }) => ({
        name,
        pid,
        metricsUrl: `${rootUrl}/metrics`,
      })),
    ];
    return {
      env: stackEnv,
      aclDocsUrl: `${acl.rootUrl}/docs`,
      sampleItem: samples[0],
      decisionUrls: decisions.map(({ url }) => url),
      processes,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The first on DECISION_PORT, the others on free ports; each joins `running` once started. */
async function startDecisionReplicas(
  services: ServiceLauncher,
  env: NodeJS.ProcessEnv,
  count: number,
  { log, running }: { log: (message: string) => void; running: Stoppable[] },
): Promise<[LaunchedService, ...LaunchedService[]]> {
  log(count === 1 ? 'starting the decision service' : `starting ${count} decision service replicas`);
  const first = await services.decisionService(env);
  running.push(first);
  const others: LaunchedService[] = [];
  for (let index = 1; index < count; index++) {
    const replica = await services.decisionService({ ...env, DECISION_PORT: '0' });
    running.push(replica);
    others.push(replica);
  }
  return [first, ...others];
}

interface Cluster {
  kubeConfig: KubeConfig;
  kubeconfigPath: string;
  spicedb: { endpoint: string; token: string };
  plane?: LocalControlPlane;
  /** The datastore of the plane's SpiceDB. */
  datastore?: SpiceDBDatastore;
}

async function clusterFor(
  stateDir: string,
  env: NodeJS.ProcessEnv,
  log: (m: string) => void,
  datastore: () => Promise<SpiceDBDatastore>,
): Promise<Cluster> {
  if (env.KUBECONFIG) {
    if (!env.SPICEDB_ENDPOINT || !env.SPICEDB_TOKEN) {
      throw new Error(
        'with KUBECONFIG set, also set SPICEDB_ENDPOINT and SPICEDB_TOKEN (the SpiceDB to use)',
      );
    }
    const kubeconfigPath = resolve(env.KUBECONFIG);
    log(`using the cluster of ${kubeconfigPath} and SpiceDB at ${env.SPICEDB_ENDPOINT}`);
    const spicedb = { endpoint: env.SPICEDB_ENDPOINT, token: env.SPICEDB_TOKEN };
    return { kubeConfig: loadKubeConfig(kubeconfigPath), kubeconfigPath, spicedb };
  }
  const spicedbDatastore = await datastore();
  log(`SpiceDB on the ${spicedbDatastore.engine} datastore`);
  const plane = await startLocalControlPlane({
    stateDir: join(stateDir, 'control-plane'),
    log,
    spicedbDatastore,
  });
  const spicedb = plane.spicedb as { endpoint: string; token: string };
  return {
    kubeConfig: plane.kubeConfig(),
    kubeconfigPath: plane.kubeconfigPath,
    spicedb,
    plane,
    datastore: spicedbDatastore,
  };
}

/**
 * Only on our own control plane, whose admin is in system:masters: on another cluster the admin may be in none of
 * the policy's groups (kind's is in kubeadm:cluster-admins), and the policy is the install's to choose.
 */
async function installAdmissionPolicies(kubeConfig: KubeConfig, log: (m: string) => void): Promise<void> {
  const installed = await applyAdmissionPolicies(kubeConfig, join(repoRoot(), 'config/admission'));
  log(`installed ${installed.join(', ')}: only the groups it lists may bind namespaces to organisations`);
}

/**
 * On our own control plane, where config/admission is installed: the ACL API authenticates as the user the grant
 * policies name (with system:masters' rights, as the admin it replaces), so it alone may set its marks on
 * grants, and the controller's audit trusts the requester the policies stamp and leaves the API's changes to the
 * API. A kubectl of the stack (the admin) is then another user, audited as `kubernetes:admin`. On another cluster
 * the services keep its kubeconfig and the audit names field managers, unverified. Returns once the apiserver
 * enforces the grant policies.
 */
async function aclApiIdentity(
  cluster: Cluster,
  namespace: string,
): Promise<{ aclEnv: NodeJS.ProcessEnv; controllerEnv: NodeJS.ProcessEnv }> {
  if (!cluster.plane) return { aclEnv: {}, controllerEnv: {} };
  const kubeconfig = await cluster.plane.writeUserKubeconfig(DEV_ACL_API_USER, ['system:masters']);
  await untilGrantPoliciesEnforced(cluster.kubeConfig, loadKubeConfig(kubeconfig), namespace);
  return {
    aclEnv: { KUBECONFIG: kubeconfig },
    controllerEnv: { AUDIT_ACTOR_FROM: 'admission', ACL_API_KUBERNETES_USER: DEV_ACL_API_USER },
  };
}

async function ensureNamespace(kubeConfig: KubeConfig, name: string): Promise<void> {
  const kube = new KubeClient(kubeConfig);
  try {
    await kube.call({
      method: 'POST',
      path: collectionPath(NAMESPACE_RESOURCE),
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  } finally {
    kube.close();
  }
}
