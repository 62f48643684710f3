import { tracingSettingsFromEnvironment } from '../config/tracing-config.js';
import type { RunningTracing } from '../observability/tracing-sdk.js';

/**
 * What an entrypoint calls first: starts tracing when the OTEL_* variables turn it on (tracing-config.ts),
 * and answers undefined otherwise, without loading the SDK at all.
 */
export async function startTracingFromEnvironment(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<RunningTracing | undefined> {
  const settings = tracingSettingsFromEnvironment(env);
  if (!settings.enabled) return undefined;
  const { startTracing } = await import('../observability/tracing-sdk.js');
  return startTracing({ serviceName, sampler: settings.sampler });
}
