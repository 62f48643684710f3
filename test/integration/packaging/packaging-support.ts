import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yaml from 'js-yaml';
import {
  CHART_DIR,
  helmTemplate,
  isCrd,
  parseManifests,
  type KubeObject,
} from '../../../hack/sync-packaging.js';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { controlPlane, createTestNamespace } from '../support/cluster.js';

export { CHART_DIR, isCrd, parseManifests, type KubeObject };

export const FIXTURES_DIR = join(import.meta.dirname, 'fixtures');

export interface PackagingTools {
  helm: string;
  kubectl: string;
}

/** The pinned helm and kubectl: the control plane's, or built/found like the control plane's. */
export async function packagingTools(): Promise<PackagingTools> {
  const { helm, kubectl } = controlPlane().tools;
  if (helm && kubectl) return { helm, kubectl };
  const resolved = await resolveToolPaths();
  return { helm: helm ?? resolved.helm, kubectl: kubectl ?? resolved.kubectl };
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCommand(command: string, args: string[], input = ''): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** kubectl as the shared control plane's admin. */
export async function kubectl(args: string[], input?: string): Promise<CommandResult> {
  const { kubectl: binary } = await packagingTools();
  return runCommand(binary, ['--kubeconfig', controlPlane().kubeconfigPath, ...args], input);
}

/** Runs `use` with the path of a values file holding `values` (helm reads JSON as YAML). */
export async function withValuesFile<T>(values: object, use: (path: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'pgo-values-'));
  try {
    const path = join(dir, 'values.json');
    await writeFile(path, JSON.stringify(values));
    return await use(path);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export function toYamlStream(objects: object[]): string {
  return objects.map((object) => yaml.dump(object, { lineWidth: -1, noRefs: true })).join('---\n');
}

/** Server-side apply with `--dry-run=server`: admission (schemas, CEL, Pod Security) without persisting anything. */
export function applyDryRun(objects: object[]): Promise<CommandResult> {
  const args = [
    'apply',
    '--server-side',
    '--field-manager=packaging-test',
    '--dry-run=server',
    '-o',
    'name',
    '-f',
    '-',
  ];
  return kubectl(args, toYamlStream(objects));
}

/** `kubectl create --dry-run=server`: for Pods, whose Pod Security check is enforced, not only warned about. */
export function createDryRun(objects: object[]): Promise<CommandResult> {
  return kubectl(['create', '--dry-run=server', '-o', 'name', '-f', '-'], toYamlStream(objects));
}

/** The least an install sets: without them the chart refuses to render (the services would not start). */
/** The decision service's read-only SpiceDB: the datastore's Secret and its own key. */
export const READ_ONLY_SPICEDB = {
  enabled: true,
  datastore: { existingSecret: 'spicedb-datastore' },
  existingSecret: 'spicedb-read-only-key',
};

export const REQUIRED_VALUES = {
  spicedb: { existingSecret: 'spicedb-credentials', readOnly: READ_ONLY_SPICEDB },
  auth: {
    jwt: { issuer: 'https://issuer.example.com/', audience: 'policy-grant-operator' },
    jwks: { url: 'https://issuer.example.com/.well-known/jwks.json' },
  },
};

export async function renderChart(
  namespace: string,
  values: object = REQUIRED_VALUES,
  release = 'pgo',
): Promise<KubeObject[]> {
  const { helm } = await packagingTools();
  return parseManifests(await helmTemplate(helm, { release, namespace, values }));
}

export interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** The kinds of workload the chart renders, whose pod templates Pod Security judges. */
export const WORKLOAD_KINDS = ['Deployment', 'Job'];

/** A Pod made of each workload's pod template, as a ReplicaSet or the Job controller would create it. */
export function podsOfWorkloads(objects: KubeObject[]): KubeObject[] {
  return objects
    .filter((object) => WORKLOAD_KINDS.includes(object.kind))
    .map((deployment) => {
      const template = (deployment.spec as { template: PodTemplate }).template;
      return {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${deployment.metadata.name}-dry-run`,
          namespace: deployment.metadata.namespace,
          labels: template.metadata?.labels ?? {},
        },
        spec: template.spec,
      };
    });
}

/** Labels that make the API server enforce Pod Security "restricted" on Pods and warn about workload templates. */
export const RESTRICTED_LABELS = {
  'pod-security.kubernetes.io/enforce': 'restricted',
  'pod-security.kubernetes.io/enforce-version': 'latest',
  'pod-security.kubernetes.io/warn': 'restricted',
  'pod-security.kubernetes.io/warn-version': 'latest',
};

export function createRestrictedNamespace(prefix: string): Promise<string> {
  return createTestNamespace(prefix, RESTRICTED_LABELS);
}

/** A gateway in front, in the namespace `gateway`: the proxy the services believe, and the pods that may reach them. */
export const TRUSTED_GATEWAY = {
  trustProxy: '10.0.0.0/16',
  trustProxyFrom: [
    {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gateway' } },
      podSelector: { matchLabels: { 'app.kubernetes.io/name': 'gateway' } },
    },
  ],
};

/** Every optional feature of the chart on at once. */
export const EVERY_FEATURE_VALUES = {
  spicedb: { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
  auth: {
    jwt: { issuer: 'https://issuer.example.com/', audience: 'policy-grant-operator', algorithms: ['ES256'] },
    jwks: { inline: '{"keys":[]}' },
    basicCredentialsSecret: 'application-credentials',
  },
  decisionService: {
    checkTimeout: '2s',
    checkCallers: { roles: ['decision_client'], serviceAccounts: ['data-plane:gateway'] },
    tokenReview: { enabled: true, audiences: ['policy-grant-operator'] },
    autoscaling: { enabled: true },
  },
  // A group name with CEL's and JSON's special characters: the API server must still compile the policy.
  namespaceBindingPolicy: { enabled: true, allowedGroups: ['system:masters', 'odd "group" \\ name'] },
  serviceMonitor: { enabled: true, labels: { release: 'prometheus' } },
  networkPolicy: {
    enabled: true,
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
  ...TRUSTED_GATEWAY,
  httpRoute: {
    enabled: true,
    parentRefs: [{ name: 'public', namespace: 'gateway' }],
    hostnames: ['acl.example.com'],
  },
  ingress: {
    enabled: true,
    host: 'acl.example.com',
    tls: [{ hosts: ['acl.example.com'], secretName: 'acl-tls' }],
  },
};

/** The normal production shape: an external SpiceDB over TLS with its own CA, keys and credentials from Secrets. */
export const EXTERNAL_SPICEDB_VALUES = {
  spicedb: {
    existingSecret: 'spicedb-credentials',
    tls: { enabled: true, caSecret: 'spicedb-ca' },
    readOnly: { ...READ_ONLY_SPICEDB, existingSecret: '', presharedKey: 'read-only-key' },
  },
  auth: {
    jwt: { issuer: 'https://issuer.example.com/', audience: 'policy-grant-operator' },
    jwks: { existingSecret: 'identity-provider-jwks' },
    basicCredentialsSecret: 'application-credentials',
  },
};

/** Alerts, dashboard, NetworkPolicy with Prometheus, a priority class, typed controller settings, global. */
export const OPERATIONS_VALUES = {
  ...EXTERNAL_SPICEDB_VALUES,
  serviceMonitor: { enabled: true },
  prometheusRule: { enabled: true, labels: { release: 'prometheus' }, alertLabels: { team: 'access' } },
  grafanaDashboard: { enabled: true },
  networkPolicy: {
    enabled: true,
    apiFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'gateway' } } }],
    metricsFrom: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
  },
  controller: { priorityClassName: 'system-cluster-critical', workers: 8, labelSelector: 'shard=a' },
  global: { imageRegistry: 'registry.example.com' },
};
