import { join } from 'node:path';
import { aclEnvironment } from '../../src/acl/acl-config.js';
import { readEnvironment } from '../../src/config/environment.js';
import { freePort } from '../localplane/free-port.js';
import { startHealthyProcess } from '../localplane/managed-process.js';
import { until } from '../wait/until.js';
import { repoRoot } from '../localplane/repo-root.js';
import { metricValue } from '../../src/observability/metric-text.js';
import type { LaunchedService, ServiceLauncher } from './service-launcher.js';

type ServiceName = 'controller' | 'decision-service' | 'acl-api';

const ADDRESS_VARIABLES: Record<ServiceName, { port: string; host: string }> = {
  controller: { port: 'CONTROLLER_PORT', host: 'CONTROLLER_HOST' },
  'decision-service': { port: 'DECISION_PORT', host: 'DECISION_HOST' },
  'acl-api': { port: 'ACL_PORT', host: 'ACL_HOST' },
};

/** Generous: tsx compiles each entrypoint on a loaded machine before the service lists its caches. */
const READY_TIMEOUT_MS = 180_000;

/**
 * Each service in a process of its own (`src/cmd/<service>.ts` through tsx), so that each one's memory can be
 * read from /proc (bench:soak). A port of 0 becomes a free one, chosen here so that the URL is known; each
 * process logs to `<stateDir>/<service>.log` and dies with this one.
 */
export function serviceProcesses(stateDir: string): ServiceLauncher {
  return {
    async controller(env) {
      // As in process: a replica that lost its lease campaigns again instead of exiting.
      const service = await startServiceProcess(stateDir, 'controller', {
        EXIT_ON_LOST_LEADERSHIP: 'false',
        ...env,
      });
      return { ...service, waitForFirstResync: (timeoutMs) => untilResynced(service.url, timeoutMs) };
    },
    decisionService: (env) => startServiceProcess(stateDir, 'decision-service', env),
    async aclApi(env) {
      const service = await startServiceProcess(stateDir, 'acl-api', env);
      const basePath = readEnvironment(aclEnvironment, env).ACL_BASE_PATH;
      return { ...service, url: `${service.rootUrl}${basePath === '/' ? '' : basePath}` };
    },
  };
}

async function startServiceProcess(
  stateDir: string,
  name: ServiceName,
  env: NodeJS.ProcessEnv,
): Promise<LaunchedService> {
  const address = ADDRESS_VARIABLES[name];
  const port = Number(env[address.port] ?? 0) || (await freePort());
  const url = `http://${env[address.host] ?? '127.0.0.1'}:${port}`;
  const child = await startHealthyProcess(
    {
      name,
      command: process.execPath,
      args: ['--import', 'tsx', join(repoRoot(), 'src/cmd', `${name}.ts`)],
      logFile: join(stateDir, `${name}.log`),
      env: { ...env, [address.port]: String(port) },
    },
    async () => (await fetch(`${url}/healthz/ready`)).status === 200,
    READY_TIMEOUT_MS,
  );
  return { name, url, rootUrl: url, pid: child.pid, stop: () => child.stop() };
}

/** From outside, the first resync shows as the first observation of its duration. */
async function untilResynced(controllerUrl: string, timeoutMs: number): Promise<void> {
  await until(() => hasResynced(controllerUrl), 'the controller to finish its first resync', timeoutMs, 200);
}

async function hasResynced(controllerUrl: string): Promise<boolean> {
  const metrics = await (await fetch(`${controllerUrl}/metrics`)).text();
  return metricValue(metrics, 'policygrant_resync_duration_seconds_count') > 0;
}
