import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Counter, register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { buildInfo, nearestPackageJson } from '../../../src/observability/build-info.js';
import {
  counter,
  createMetricsRegistry,
  gauge,
  histogram,
  METRIC_PREFIX,
} from '../../../src/observability/metrics.js';

describe('metrics helpers', () => {
  it('registers on the given registry, never on the global one', async () => {
    const registry = createMetricsRegistry();
    counter(registry, { name: 'demo_total', help: 'demo' }).inc();
    expect(await registry.metrics()).toContain('policygrant_demo_total 1');
    expect(globalRegistry.getSingleMetric('policygrant_demo_total')).toBeUndefined();
  });

  it('prefixes every name it registers with policygrant_', async () => {
    const registry = createMetricsRegistry();
    counter(registry, { name: 'a_total', help: 'a' });
    gauge(registry, { name: 'b', help: 'b' });
    histogram(registry, { name: 'c_seconds', help: 'c' });
    expect(METRIC_PREFIX).toBe('policygrant_');
    expect(registry.getMetricsAsArray().map((metric) => metric.name)).toEqual([
      'policygrant_build_info',
      'policygrant_a_total',
      'policygrant_b',
      'policygrant_c_seconds',
    ]);
  });

  it('returns the existing metric when asked twice for one name', () => {
    const registry = createMetricsRegistry();
    const first = counter(registry, { name: 'twice_total', help: 'twice', labelNames: ['kind'] });
    expect(counter(registry, { name: 'twice_total', help: 'twice', labelNames: ['kind'] })).toBe(first);
    expect(first).toBeInstanceOf(Counter);
  });

  it('refuses a name that is registered as another metric type', () => {
    const registry = createMetricsRegistry();
    gauge(registry, { name: 'clash', help: 'clash' });
    expect(() => histogram(registry, { name: 'clash', help: 'clash' })).toThrow(
      /policygrant_clash is already registered as another type/,
    );
  });

  it('adds process metrics only when asked to', async () => {
    expect(await createMetricsRegistry().metrics()).not.toContain('process_cpu');
    expect(await createMetricsRegistry({ processMetrics: true }).metrics()).toContain(
      'process_cpu_user_seconds_total',
    );
  });

  it('keeps independent registries apart', async () => {
    const acl = createMetricsRegistry();
    const decision = createMetricsRegistry();
    counter(acl, { name: 'shared_total', help: 'same name in two services' }).inc(3);
    counter(decision, { name: 'shared_total', help: 'same name in two services' }).inc(5);
    expect(await acl.metrics()).toContain('policygrant_shared_total 3');
    expect(await decision.metrics()).toContain('policygrant_shared_total 5');
  });
});

describe('policygrant_build_info', () => {
  const { version } = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };

  it('is 1 on every registry: the version of package.json, the revision, the Node.js runtime', async () => {
    const { revision } = buildInfo();
    expect(await createMetricsRegistry().metrics()).toContain(
      `policygrant_build_info{version="${version}",revision="${revision}",node="${process.version}"} 1`,
    );
  });

  it('takes the revision from BUILD_REVISION, which the image sets, and says unknown without it', () => {
    expect(buildInfo({ BUILD_REVISION: '0ab7918c' })).toEqual({
      version,
      revision: '0ab7918c',
      node: process.version,
    });
    expect(buildInfo({}).revision).toBe('unknown');
  });

  it('reads the version from the package.json nearest above the module, however deep the build puts it', () => {
    const root = mkdtempSync(join(tmpdir(), 'build-info-'));
    try {
      writeFileSync(join(root, 'package.json'), '{"version":"1.2.3"}');
      const built = join(root, 'dist/.bench/src/observability');
      mkdirSync(built, { recursive: true });
      const moduleUrl = pathToFileURL(join(built, 'build-info.js')).href;
      expect(nearestPackageJson(moduleUrl).pathname).toBe(join(root, 'package.json'));
      rmSync(join(root, 'package.json'));
      // Nothing above the temporary folder is a package either.
      expect(() => nearestPackageJson(moduleUrl)).toThrow(/no package.json above/);
    } finally {
      rmSync(root, { recursive: true });
    }
  });
});
