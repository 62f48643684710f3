import { describe, expect, it } from 'vitest';
import { helmTemplate } from '../../../hack/sync-packaging.js';
import { SERVICES } from '../../../src/cmd/main.js';
import { tracingSettingsFromEnvironment } from '../../../src/config/tracing-config.js';
import { packagingTools, REQUIRED_VALUES, renderChart, type KubeObject } from './packaging-support.js';

// The chart's `tracing` values: the OTEL_* variables of the three services, none while tracing is off, and
// what the services read from them.

const NAMESPACE = 'policy-grant-system';
const ENDPOINT = 'http://otel-collector.observability:4318';

type EnvVar = { name: string; value?: string };

function envOf(objects: KubeObject[], service: string): EnvVar[] {
  const found = objects.find(
    (object) =>
      object.kind === 'Deployment' && object.metadata.labels?.['app.kubernetes.io/component'] === service,
  );
  if (!found) throw new Error(`no Deployment for ${service}`);
  const { template } = found.spec as { template: { spec: { containers: { env: EnvVar[] }[] } } };
  return template.spec.containers[0]?.env ?? [];
}

const plainValues = (env: EnvVar[]) =>
  Object.fromEntries(env.filter((each) => each.value !== undefined).map((each) => [each.name, each.value]));

describe('tracing values', () => {
  it('off by default: no service gets an OTEL_* variable', async () => {
    const objects = await renderChart(NAMESPACE, REQUIRED_VALUES);
    for (const service of SERVICES) {
      expect(envOf(objects, service).filter((each) => each.name.startsWith('OTEL_'))).toEqual([]);
    }
  });

  it('on: each service exports to the endpoint under its own service name, and reads tracing as on', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      tracing: {
        enabled: true,
        endpoint: ENDPOINT,
        sampler: 'parentbased_traceidratio',
        samplerArg: '0.1',
        resourceAttributes: 'deployment.environment.name=test',
      },
    });
    for (const service of SERVICES) {
      const env = plainValues(envOf(objects, service));
      expect(env).toMatchObject({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_SERVICE_NAME: `pgo-policy-grant-operator-${service}`,
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.1',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
      });
      expect(tracingSettingsFromEnvironment(env)).toEqual({
        enabled: true,
        sampler: { kind: 'parentbased_traceidratio', ratio: 0.1 },
      });
    }
  });

  it('refuses tracing without an endpoint, naming the value', async () => {
    const { helm } = await packagingTools();
    await expect(
      helmTemplate(helm, {
        namespace: NAMESPACE,
        values: { ...REQUIRED_VALUES, tracing: { enabled: true } },
      }),
    ).rejects.toThrow(/tracing.endpoint: the collector's OTLP\/HTTP URL, required when tracing.enabled/);
  });
});
