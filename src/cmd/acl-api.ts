import { aclSettingsFromEnvironment, type AclApiConfig } from '../acl/acl-config.js';
import { startAclApi } from '../acl/acl-server.js';
import { createAuthenticators } from '../config/auth-config.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import { createLogger } from '../observability/logger.js';
import { createMetricsRegistry } from '../observability/metrics.js';
import { startTracingFromEnvironment } from './tracing-setup.js';
import { runIfEntrypoint, stopOnSignals, thenFlushTraces } from './process-lifecycle.js';

// The ACL API: `node dist/cmd/acl-api.js` (or `main.js acl-api`), configured by environment variables
// (docs/acl-api.md). The all-in-one development stack imports startAclApi.
export { startAclApi };
export type { RunningAclApi, StartOptions } from '../acl/acl-server.js';
export type { AclApiConfig } from '../acl/acl-config.js';

/** The whole configuration of the ACL API: the environment's settings, and the live parts built from them. */
export async function aclConfigFromEnvironment(env: NodeJS.ProcessEnv = process.env): Promise<AclApiConfig> {
  const { auth, scrypt, logLevel, ...settings } = aclSettingsFromEnvironment(env);
  const metricsRegistry = createMetricsRegistry({ processMetrics: true });
  return {
    ...settings,
    logger: { level: logLevel },
    kubeConfig: loadKubeConfig(env.KUBECONFIG),
    authenticators: await createAuthenticators(auth, {
      scrypt,
      metricsRegistry,
      logger: createLogger({ level: logLevel, name: 'acl-api' }),
    }),
    metricsRegistry,
  };
}

export async function main(): Promise<void> {
  const tracing = await startTracingFromEnvironment('acl-api');
  const api = await startAclApi(await aclConfigFromEnvironment());
  stopOnSignals(
    'acl-api',
    thenFlushTraces(() => api.stop(), tracing),
  );
}

runIfEntrypoint(import.meta.url, 'acl-api', main);
