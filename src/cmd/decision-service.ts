import { tokenReviewApi } from '../auth/token-review-verifier.js';
import { createAuthenticators } from '../config/auth-config.js';
import { loadKubeConfig } from '../kube/kube-config.js';
import { spicedbClientOptions } from '../config/spicedb-config.js';
import { decisionSettingsFromEnvironment } from '../decision/decision-config.js';
import { startDecisionService, type DecisionServiceConfig } from '../decision/decision-service.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { createMetricsRegistry } from '../observability/metrics.js';
import { startTracingFromEnvironment } from './tracing-setup.js';
import { runIfEntrypoint, stopOnSignals, thenFlushTraces } from './process-lifecycle.js';

// The decision service: `node dist/cmd/decision-service.js` (or `main.js decision-service`), configured by
// environment variables (docs/decision-service.md). The all-in-one development stack imports it.
export { startDecisionService };
export type { DecisionServiceConfig, RunningDecisionService } from '../decision/decision-service.js';

/** The configuration `startDecisionService` takes: the environment's settings, and the live parts built from them. */
export async function decisionConfigFromEnvironment(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DecisionServiceConfig & { logger: Logger }> {
  const { spicedb, auth, scrypt, tokenReview, logLevel, ...settings } = decisionSettingsFromEnvironment(env);
  const metricsRegistry = createMetricsRegistry({ processMetrics: true });
  const logger = createLogger({ level: logLevel, name: 'decision-service' });
  return {
    ...settings,
    spicedb: spicedbClientOptions(spicedb),
    authenticators: await createAuthenticators(auth, { scrypt, metricsRegistry, logger }),
    metricsRegistry,
    ...(tokenReview
      ? { tokenReview: { ...tokenReview, api: tokenReviewApi(loadKubeConfig(env.KUBECONFIG)) } }
      : {}),
    logger,
  };
}

export async function main(): Promise<void> {
  const tracing = await startTracingFromEnvironment('decision-service');
  const service = await startDecisionService(await decisionConfigFromEnvironment());
  stopOnSignals(
    'decision-service',
    thenFlushTraces(() => service.stop(), tracing),
  );
}

runIfEntrypoint(import.meta.url, 'decision-service', main);
