import { z } from 'zod';
import type { SamplerSetting } from '../observability/tracing-sdk.js';
import { booleanFlag, readEnvironment } from './environment.js';

export type TracingSettings = { enabled: false } | { enabled: true; sampler: SamplerSetting };

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

const tracingEnvironment = z.object({
  OTEL_SDK_DISABLED: booleanFlag.optional(),
  // Only OTLP is shipped; `none` turns tracing off even when an endpoint is set.
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none'], { error: 'expected otlp or none' }).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().optional(),
  OTEL_TRACES_SAMPLER: z.enum(SAMPLERS, { error: `expected one of ${SAMPLERS.join(', ')}` }).optional(),
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number({ error: 'expected a ratio from 0 to 1' })
    .min(0, 'expected a ratio from 0 to 1')
    .max(1, 'expected a ratio from 0 to 1')
    .optional(),
});

/**
 * Tracing is off unless asked for. The OpenTelemetry specification makes `otlp` the default of
 * OTEL_TRACES_EXPORTER; here an unset exporter means "off" unless an OTLP endpoint is configured, so that an
 * image started without any OTEL_* variable never tries to reach a collector. On: OTEL_TRACES_EXPORTER=otlp,
 * or an OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT with the exporter unset. Off, whatever else is set:
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The sampler defaults to parentbased_always_on, as the
 * specification says, and a ratio to 1.
 */
export function tracingSettingsFromEnvironment(env: NodeJS.ProcessEnv = process.env): TracingSettings {
  const settings = readEnvironment(tracingEnvironment, env);
  if (settings.OTEL_SDK_DISABLED === true || !exporterChosen(settings)) return { enabled: false };
  return { enabled: true, sampler: samplerSetting(settings) };
}

function exporterChosen(settings: z.output<typeof tracingEnvironment>): boolean {
  if (settings.OTEL_TRACES_EXPORTER !== undefined) return settings.OTEL_TRACES_EXPORTER === 'otlp';
  return (
    settings.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
    settings.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined
  );
}

function samplerSetting(settings: z.output<typeof tracingEnvironment>): SamplerSetting {
  const kind = settings.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on';
  if (kind === 'traceidratio' || kind === 'parentbased_traceidratio') {
    return { kind, ratio: settings.OTEL_TRACES_SAMPLER_ARG ?? 1 };
  }
  return { kind };
}
