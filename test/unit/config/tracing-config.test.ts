import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/config/environment.js';
import { tracingSettingsFromEnvironment } from '../../../src/config/tracing-config.js';

const ENDPOINT = 'http://collector:4318';
const DEFAULT_SAMPLER = { kind: 'parentbased_always_on' };

describe('the tracing switch', () => {
  it.each<[string, NodeJS.ProcessEnv]>([
    ['no OTEL_* variable', {}],
    [
      'an empty exporter and endpoint (as a Helm template may leave them)',
      { OTEL_TRACES_EXPORTER: '', OTEL_EXPORTER_OTLP_ENDPOINT: '' },
    ],
    [
      'OTEL_TRACES_EXPORTER=none, even with an endpoint',
      { OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT },
    ],
    ['OTEL_SDK_DISABLED=true, even with otlp', { OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }],
    ['only a service name', { OTEL_SERVICE_NAME: 'acl' }],
  ])('is off with %s', (_case, env) => {
    expect(tracingSettingsFromEnvironment(env)).toEqual({ enabled: false });
  });

  it.each<[string, NodeJS.ProcessEnv]>([
    ['OTEL_TRACES_EXPORTER=otlp', { OTEL_TRACES_EXPORTER: 'otlp' }],
    ['an OTLP endpoint with the exporter unset', { OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT }],
    [
      'an OTLP traces endpoint with the exporter unset',
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${ENDPOINT}/v1/traces` },
    ],
    ['OTEL_SDK_DISABLED=false and otlp', { OTEL_SDK_DISABLED: 'false', OTEL_TRACES_EXPORTER: 'otlp' }],
  ])('is on with %s, sampling parent-based always-on by default', (_case, env) => {
    expect(tracingSettingsFromEnvironment(env)).toEqual({ enabled: true, sampler: DEFAULT_SAMPLER });
  });

  it('takes the sampler and its ratio', () => {
    const env = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' };
    expect(tracingSettingsFromEnvironment({ ...env, OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({
      enabled: true,
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
    });
    expect(tracingSettingsFromEnvironment(env)).toEqual({
      enabled: true,
      sampler: { kind: 'parentbased_traceidratio', ratio: 1 },
    });
  });

  it.each<[string, NodeJS.ProcessEnv, RegExp]>([
    [
      'an exporter it does not ship',
      { OTEL_TRACES_EXPORTER: 'zipkin' },
      /OTEL_TRACES_EXPORTER: expected otlp or none/,
    ],
    [
      'an unknown sampler',
      { OTEL_TRACES_SAMPLER: 'sometimes' },
      /OTEL_TRACES_SAMPLER: expected one of always_on/,
    ],
    [
      'a ratio above 1',
      { OTEL_TRACES_SAMPLER_ARG: '2' },
      /OTEL_TRACES_SAMPLER_ARG: expected a ratio from 0 to 1/,
    ],
    ['a ratio that is no number', { OTEL_TRACES_SAMPLER_ARG: 'half' }, /OTEL_TRACES_SAMPLER_ARG/],
    [
      'a typo in OTEL_SDK_DISABLED',
      { OTEL_SDK_DISABLED: 'yes' },
      /OTEL_SDK_DISABLED: expected true or false/,
    ],
  ])('refuses %s, naming the variable', (_case, env, message) => {
    const read = () => tracingSettingsFromEnvironment(env);
    expect(read).toThrow(ConfigurationError);
    expect(read).toThrow(message);
  });
});
