import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MutationAuditor } from '../../../src/acl/audit/mutation-auditor.js';
import { GrantMetrics, registerMembershipMetrics } from '../../../src/controller/controller-metrics.js';
import { controllerConfigFromEnvironment } from '../../../src/controller/controller-config.js';
import { decisionMetrics } from '../../../src/decision/decision-metrics.js';
import { revisionBarrierMetrics } from '../../../src/decision/revision-barrier-metrics.js';
import { httpMetrics } from '../../../src/http/http-metrics.js';
import { rateLimitedRequests } from '../../../src/http/rate-limit/rate-limit-metrics.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { ControllerMetrics } from '../../../src/runtime/controller-metrics.js';
import { PrometheusQueueMetrics } from '../../../src/runtime/workqueue-metrics.js';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { headingAnchors } from '../../support/markdown.js';
import {
  CHART_DIR,
  EXTERNAL_SPICEDB_VALUES,
  OPERATIONS_VALUES,
  packagingTools,
  renderChart,
  REQUIRED_VALUES,
  runCommand,
  withValuesFile,
  type KubeObject,
} from './packaging-support.js';

// The chart's operational side: alerts and dashboard on metrics the code registers,
// Prometheus admitted by the NetworkPolicy, disruption budgets and spread, typed controller settings, and the
// chart as a subchart and under `helm test`.

const NAMESPACE = 'policy-grant-system';

const component = (object: KubeObject) => object.metadata.labels?.['app.kubernetes.io/component'];
const ofKind = (objects: KubeObject[], kind: string) => objects.filter((object) => object.kind === kind);

/** Every metric name the services register, histograms with their series suffixes. */
async function registeredMetricNames(): Promise<Set<string>> {
  const registry = createMetricsRegistry();
  new GrantMetrics(registry, () => []);
  registerMembershipMetrics(registry, () => []);
  decisionMetrics(registry);
  revisionBarrierMetrics(registry, { lastMessageAt: () => undefined, trackedEntries: () => 0 });
  httpMetrics(registry);
  rateLimitedRequests(registry);
  new ControllerMetrics(registry, 'policygrant');
  new PrometheusQueueMetrics(registry, 'policygrant');
  new MutationAuditor({} as never, createLogger({ level: 'silent' }), registry);
  const metrics = await registry.getMetricsAsJSON();
  return new Set(
    metrics.flatMap(({ name, type }) =>
      String(type) === 'histogram' ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name],
    ),
  );
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'le',
]);

/** The metric names of a PromQL expression: identifiers not called as functions, outside strings and selectors. */
function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"[^"]*"/g, '')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '');
  return [...bare.matchAll(/(?<![a-zA-Z0-9_:.])[a-zA-Z_:][a-zA-Z0-9_:]*(?![a-zA-Z0-9_:]|\s*\()/g)]
    .map(([name]) => name)
    .filter((name) => !PROMQL_WORDS.has(name) && !/^[0-9]/.test(name));
}

interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: object;
  annotations: { summary: string; runbook_url: string };
}

function alertRules(objects: KubeObject[]): AlertRule[] {
  const [rule] = ofKind(objects, 'PrometheusRule') as unknown as {
    spec: { groups: { rules: AlertRule[] }[] };
  }[];
  return rule?.spec.groups.flatMap((group) => group.rules) ?? [];
}

function dashboardExpressions(objects: KubeObject[]): string[] {
  const configMap = ofKind(objects, 'ConfigMap').find((object) =>
    object.metadata.name.endsWith('-dashboard'),
  );
  const json =
    (configMap?.data as Record<string, string> | undefined)?.['policy-grant-operator.json'] ?? '{}';
  const dashboard = JSON.parse(json) as { panels?: { targets: { expr: string }[] }[] };
  return (dashboard.panels ?? []).flatMap((panel) => panel.targets.map((target) => target.expr));
}

async function renderError(values: object): Promise<string> {
  return renderChart(NAMESPACE, values).then(
    () => 'rendered',
    (error: Error) => error.message,
  );
}

describe('alerts and dashboard', () => {
  it('every metric the rules and the dashboard query is one the services register', async () => {
    const objects = await renderChart(NAMESPACE, OPERATIONS_VALUES);
    const expressions = [...alertRules(objects).map((rule) => rule.expr), ...dashboardExpressions(objects)];
    const used = new Set(expressions.flatMap(metricNamesIn));
    const registered = await registeredMetricNames();
    expect(expressions.length).toBeGreaterThanOrEqual(20);
    expect([...used].filter((name) => !registered.has(name))).toEqual([]);
    for (const name of [
      'policygrant_projection_failed_grants',
      'policygrant_audit_records_unwritten_total',
      'workqueue_depth',
    ])
      expect(used).toContain(name);
  });

  it('every alert links its section of docs/runbooks.md, under runbookBaseUrl when set', async () => {
    const anchors = headingAnchors(readFileSync(join(REPO_ROOT, 'docs/runbooks.md'), 'utf8'));
    const rules = alertRules(await renderChart(NAMESPACE, OPERATIONS_VALUES));
    expect(rules.length).toBeGreaterThan(0);
    for (const { alert, annotations } of rules) {
      const [page, anchor = ''] = annotations.runbook_url.split('#');
      expect(page, alert).toBe('docs/runbooks.md');
      expect(anchor, alert).toBe(alert.toLowerCase());
      expect(anchors, alert).toContain(anchor);
    }
    const base = 'https://git.example.com/policy-grant-operator/blob/v0.1.0/docs/runbooks.md';
    const linked = alertRules(
      await renderChart(NAMESPACE, {
        ...OPERATIONS_VALUES,
        prometheusRule: { ...OPERATIONS_VALUES.prometheusRule, runbookBaseUrl: base },
      }),
    );
    expect(linked.map((rule) => rule.annotations.runbook_url)).toEqual(
      rules.map((rule) => `${base}#${rule.alert.toLowerCase()}`),
    );
  });

  it('the name parser finds metrics and ignores functions, labels and modifiers', () => {
    expect(
      metricNamesIn('max by (name) (rate(foo_total{job="x"}[5m])) > 0 and bar_seconds_bucket > 1e3'),
    ).toEqual(['foo_total', 'bar_seconds_bucket']);
  });

  it('thresholds, windows and for: come from the values; alert labels are added', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...OPERATIONS_VALUES,
      prometheusRule: {
        enabled: true,
        alerts: { workQueueDepth: { threshold: 7, for: '3m', severity: 'critical' } },
        alertLabels: { team: 'access' },
      },
    });
    const rule = alertRules(objects).find((candidate) => candidate.alert === 'PolicyGrantWorkQueueDeep');
    expect(rule?.expr).toBe(
      'max by (name) (workqueue_depth{namespace="policy-grant-system",job="pgo-policy-grant-operator-controller"}) > 7',
    );
    expect(rule?.for).toBe('3m');
    expect(rule?.labels).toEqual({ severity: 'critical', team: 'access' });
    expect(alertRules(objects).map((candidate) => candidate.alert)).toHaveLength(9);
  });

  it('neither a PrometheusRule nor a dashboard by default', async () => {
    const objects = await renderChart(NAMESPACE, EXTERNAL_SPICEDB_VALUES);
    expect(alertRules(objects)).toEqual([]);
    expect(dashboardExpressions(objects)).toEqual([]);
  });

  it('with the NetworkPolicy on, Prometheus (metricsFrom) may reach every service it scrapes', async () => {
    const objects = await renderChart(NAMESPACE, OPERATIONS_VALUES);
    const monitoring = OPERATIONS_VALUES.networkPolicy.metricsFrom[0];
    const policies = ofKind(objects, 'NetworkPolicy') as unknown as {
      metadata: KubeObject['metadata'];
      spec: { ingress: { from?: object[] }[] };
    }[];
    for (const name of ['acl-api', 'decision-service', 'controller']) {
      const policy = policies.find((candidate) => component(candidate as unknown as KubeObject) === name);
      expect(policy?.spec.ingress[0]?.from, name).toContainEqual(monitoring);
    }
    const [monitor] = ofKind(objects, 'ServiceMonitor') as unknown as {
      spec: { selector: { matchExpressions: { values: string[] }[] } };
    }[];
    expect(monitor?.spec.selector.matchExpressions[0]?.values).toEqual([
      'acl-api',
      'controller',
      'decision-service',
    ]);
  });
});

describe('availability', () => {
  it('a PodDisruptionBudget per service and for the read-only SpiceDB, soft spread across nodes and zones, a priority class', async () => {
    const objects = await renderChart(NAMESPACE, OPERATIONS_VALUES);
    expect(ofKind(objects, 'PodDisruptionBudget').map(component).sort()).toEqual([
      'acl-api',
      'controller',
      'decision-service',
      'spicedb-read-only',
    ]);
    for (const deployment of ofKind(objects, 'Deployment').filter(
      (object) => !component(object)?.startsWith('spicedb'),
    )) {
      const pod = (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec;
      const spread = pod.topologySpreadConstraints as { topologyKey: string; whenUnsatisfiable: string }[];
      expect(spread.map((constraint) => constraint.topologyKey)).toEqual([
        'kubernetes.io/hostname',
        'topology.kubernetes.io/zone',
      ]);
      expect(new Set(spread.map((constraint) => constraint.whenUnsatisfiable))).toEqual(
        new Set(['ScheduleAnyway']),
      );
      if (component(deployment) === 'controller')
        expect(pod.priorityClassName).toBe('system-cluster-critical');
    }
  });

  it('defaultTopologySpread: false leaves the scheduling to the cluster', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...EXTERNAL_SPICEDB_VALUES,
      defaultTopologySpread: false,
    });
    for (const deployment of ofKind(objects, 'Deployment'))
      expect(deployment.spec).not.toHaveProperty('template.spec.topologySpreadConstraints');
  });

  it('minAvailable replaces maxUnavailable', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...EXTERNAL_SPICEDB_VALUES,
      aclApi: { replicas: 3, podDisruptionBudget: { maxUnavailable: '', minAvailable: 2 } },
    });
    const budget = ofKind(objects, 'PodDisruptionBudget').find((object) => component(object) === 'acl-api');
    expect(budget?.spec).toMatchObject({ minAvailable: 2 });
    expect(budget?.spec).not.toHaveProperty('maxUnavailable');
  });

  it.each([
    ['maxUnavailable: 0', { maxUnavailable: 0 }, 'minimum: got 0, want 1'],
    ['a percentage over 100%', { maxUnavailable: '150%' }, 'maxUnavailable'],
    ['minAvailable 100%', { maxUnavailable: '', minAvailable: '100%' }, 'minAvailable'],
    ['both at once', { minAvailable: 1 }, "maxUnavailable': value must be ''"],
    ['neither', { maxUnavailable: '' }, "maxUnavailable': 'not' failed"],
    ['minAvailable at the replica count', { maxUnavailable: '', minAvailable: 2 }, 'minAvailable'],
  ])('refuses %s', async (_name, budget, field) => {
    const error = await renderError({
      ...EXTERNAL_SPICEDB_VALUES,
      controller: { podDisruptionBudget: budget },
    });
    expect(error).toContain(field);
  });
});

describe('controller settings', () => {
  it('reach the controller as the variables it reads, and it accepts them', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...OPERATIONS_VALUES,
      controller: {
        workers: 8,
        labelSelector: 'shard=a',
        leaderElection: { leaseDuration: '30s', renewDeadline: '20s', retryPeriod: '4s' },
      },
    });
    const settings = ofKind(objects, 'ConfigMap').find((object) => component(object) === 'settings')
      ?.data as Record<string, string>;
    const config = controllerConfigFromEnvironment({
      ...settings,
      SPICEDB_ENDPOINT: 'spicedb:50051',
      SPICEDB_TOKEN: 'key',
      ACL_NAMESPACE: NAMESPACE,
    });
    expect(config.leaderElection).toMatchObject({
      leaseDurationMs: 30_000,
      renewDeadlineMs: 20_000,
      retryPeriodMs: 4_000,
    });
    expect(config.maxConcurrentReconciles).toBe(8);
    expect(config.labelSelector).toBe('shard=a');
  });

  it.each([
    [
      'a renew deadline as long as the lease',
      { leaseDuration: '10s', renewDeadline: '10s' },
      'leaseDuration >',
    ],
    ['a retry period too close to the deadline', { renewDeadline: '2s', retryPeriod: '2s' }, 'retryPeriod'],
    ['a lease in milliseconds', { leaseDuration: '1500ms' }, 'leaseDuration'],
  ])('refuses %s at render time', async (_name, leaderElection, message) => {
    const error = await renderError({ ...EXTERNAL_SPICEDB_VALUES, controller: { leaderElection } });
    expect(error).toContain(message);
  });

  it('refuses workers outside 1..64', async () => {
    expect(await renderError({ ...EXTERNAL_SPICEDB_VALUES, controller: { workers: 0 } })).toContain(
      'workers',
    );
  });
});

describe('the chart as a citizen', () => {
  it('helm test runs a Pod per service that asks its Service for /healthz/ready', async () => {
    const objects = await renderChart(NAMESPACE, EXTERNAL_SPICEDB_VALUES);
    const tests = ofKind(objects, 'Pod').filter(
      (pod) => pod.metadata.annotations?.['helm.sh/hook'] === 'test',
    );
    expect(tests).toHaveLength(3);
    for (const name of ['acl-api:8080', 'controller:8082', 'decision-service:8081']) {
      const [service, port] = name.split(':');
      const url = `http://pgo-policy-grant-operator-${service}.${NAMESPACE}.svc:${port}/healthz/ready`;
      expect(
        tests.some((pod) => JSON.stringify(pod.spec).includes(url)),
        name,
      ).toBe(true);
    }
  });

  it('the bundled SpiceDB key is required on a first install and renders the same every time', async () => {
    const bundled = { ...REQUIRED_VALUES, spicedb: { bundled: { enabled: true } } };
    expect(await renderError(bundled)).toContain('spicedb.bundled.enabled needs spicedb.presharedKey');
    const values = { ...REQUIRED_VALUES, spicedb: { bundled: { enabled: true }, presharedKey: 'dev-key' } };
    const secretOf = async () =>
      ofKind(await renderChart(NAMESPACE, values), 'Secret').find(
        (secret) => component(secret) === 'spicedb',
      );
    expect(await secretOf()).toEqual(await secretOf());
  });

  it.each([
    ['alerts, dashboard, policies, typed settings and global values', OPERATIONS_VALUES],
    [
      'minAvailable budgets, no default spread, no test Pods, custom leader election',
      {
        ...EXTERNAL_SPICEDB_VALUES,
        defaultTopologySpread: false,
        tests: { enabled: false },
        aclApi: { replicas: 3, podDisruptionBudget: { maxUnavailable: '', minAvailable: '50%' } },
        controller: {
          podDisruptionBudget: { maxUnavailable: '', minAvailable: 1 },
          leaderElection: { leaseDuration: '30s', renewDeadline: '20s', retryPeriod: '5s' },
        },
      },
    ],
    [
      'an image by digest from a registry with a port, CRDs managed apart, the bundled SpiceDB',
      {
        auth: REQUIRED_VALUES.auth,
        spicedb: { bundled: { enabled: true }, presharedKey: 'dev-key' },
        image: { repository: 'localhost:5001/pgo', digest: `sha256:${'ab'.repeat(32)}`, pullPolicy: 'Never' },
        crds: { enabled: false },
      },
    ],
    ['CRDs that helm uninstall deletes', { ...EXTERNAL_SPICEDB_VALUES, crds: { keep: false } }],
  ])('helm lint --strict passes with %s', async (_name, values) => {
    const { helm } = await packagingTools();
    const result = await withValuesFile(values, (file) =>
      runCommand(helm, ['lint', '--strict', CHART_DIR, '-f', file]),
    );
    expect(result.stderr + result.stdout).toContain('0 chart(s) failed');
    expect(result.code).toBe(0);
  });
});
