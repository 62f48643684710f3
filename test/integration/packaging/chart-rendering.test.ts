import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { helmTemplate, REPO_ROOT } from '../../../hack/sync-packaging.js';
import { SERVICES } from '../../../src/cmd/main.js';
import { ORGANISATION_LABEL } from '../../../src/verdict/namespace-authorisation.js';
import {
  EVERY_FEATURE_VALUES,
  packagingTools,
  REQUIRED_VALUES,
  TRUSTED_GATEWAY,
  parseManifests,
  renderChart,
  type KubeObject,
  type PodTemplate,
  READ_ONLY_SPICEDB,
} from './packaging-support.js';

// What the chart renders, read back: least-privilege RBAC per component, the services' containers, the
// configuration they get, the gateway routes, and the values the schema and the templates refuse.

const NAMESPACE = 'policy-grant-system';

interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function componentOf(object: KubeObject): string | undefined {
  return object.metadata.labels?.['app.kubernetes.io/component'];
}

function rulesOf(objects: KubeObject[], component: string, kind: 'ClusterRole' | 'Role'): PolicyRule[] {
  const role = objects.find((object) => object.kind === kind && componentOf(object) === component);
  return (role?.rules as PolicyRule[] | undefined) ?? [];
}

const rule = (apiGroup: string, resources: string[], verbs: string[]): PolicyRule => ({
  apiGroups: [apiGroup],
  resources,
  verbs,
});

/** The least-privilege contract: exactly what each service calls (see the comments in the templates). */
const EXPECTED_RBAC: Record<string, { ClusterRole: PolicyRule[]; Role: PolicyRule[] }> = {
  'acl-api': {
    ClusterRole: [
      rule('acl.policygrant.dev', ['policygrants', 'catalogitems'], ['list', 'watch']),
      rule('', ['namespaces'], ['list', 'watch']),
    ],
    Role: [
      rule('acl.policygrant.dev', ['policygrants'], ['get', 'create', 'patch', 'delete']),
      rule('acl.policygrant.dev', ['memberships'], ['list', 'watch', 'create', 'update']),
      rule('acl.policygrant.dev', ['grantclaims'], ['get', 'create', 'update', 'delete']),
      rule('acl.policygrant.dev', ['delegations'], ['list', 'watch', 'create', 'patch']),
      rule('acl.policygrant.dev', ['agents'], ['get', 'create', 'update', 'delete']),
      rule('acl.policygrant.dev', ['accessrequests'], ['get', 'list', 'watch', 'create']),
      rule('acl.policygrant.dev', ['accessrequests/status'], ['update']),
      rule('discovery.k8s.io', ['endpointslices'], ['list', 'watch']),
    ],
  },
  controller: {
    ClusterRole: [
      rule('acl.policygrant.dev', ['policygrants'], ['list', 'watch', 'patch']),
      rule('acl.policygrant.dev', ['policygrants/status'], ['update']),
      rule('acl.policygrant.dev', ['catalogitems'], ['list', 'watch']),
      rule('', ['namespaces'], ['list', 'watch']),
      rule('events.k8s.io', ['events'], ['create']),
    ],
    Role: [
      rule('acl.policygrant.dev', ['memberships'], ['list', 'watch', 'patch', 'delete']),
      rule('acl.policygrant.dev', ['memberships/status'], ['update']),
      rule('acl.policygrant.dev', ['delegations'], ['list', 'watch', 'patch', 'delete']),
      rule('acl.policygrant.dev', ['delegations/status'], ['update']),
      rule('acl.policygrant.dev', ['agents'], ['list', 'watch', 'delete']),
      rule('acl.policygrant.dev', ['accessrequests'], ['list', 'watch', 'delete']),
      rule('acl.policygrant.dev', ['accessrequests/status'], ['update']),
      rule('coordination.k8s.io', ['leases'], ['create']),
      {
        ...rule('coordination.k8s.io', ['leases'], ['get', 'update']),
        resourceNames: ['pgo-policy-grant-operator-controller'],
      },
    ],
  },
  'decision-service': { ClusterRole: [], Role: [] },
};

function deployment(objects: KubeObject[], component: string) {
  const found = objects.find((object) => object.kind === 'Deployment' && componentOf(object) === component);
  if (!found) throw new Error(`no Deployment for ${component}`);
  const spec = found.spec as { replicas?: number; template: PodTemplate };
  const container = (spec.template.spec.containers as Record<string, unknown>[])[0] as {
    args: string[];
    env: { name: string; value?: string; valueFrom?: unknown }[];
    livenessProbe: { httpGet: { path: string; port: string } };
    readinessProbe: { httpGet: { path: string; port: string } };
    volumeMounts: { name: string; mountPath: string }[];
  };
  return { replicas: spec.replicas, pod: spec.template.spec, container };
}

describe('RBAC', () => {
  it.each(Object.keys(EXPECTED_RBAC))(
    '%s: exactly the rules it needs, bound to its own ServiceAccount',
    async (name) => {
      const objects = await renderChart(NAMESPACE);
      expect(rulesOf(objects, name, 'ClusterRole')).toEqual(EXPECTED_RBAC[name]?.ClusterRole);
      expect(rulesOf(objects, name, 'Role')).toEqual(EXPECTED_RBAC[name]?.Role);
      for (const binding of objects.filter((o) => o.kind.endsWith('Binding') && componentOf(o) === name)) {
        expect(binding.subjects).toEqual([
          { kind: 'ServiceAccount', name: `pgo-policy-grant-operator-${name}`, namespace: NAMESPACE },
        ]);
        expect((binding.roleRef as { name: string }).name).toBe(`pgo-policy-grant-operator-${name}`);
      }
    },
  );

  it('writes only in the release namespace: every Role is there, and nothing cluster-wide can write', async () => {
    const objects = await renderChart(NAMESPACE, EVERY_FEATURE_VALUES);
    for (const role of objects.filter((object) => object.kind === 'Role'))
      expect(role.metadata.namespace).toBe(NAMESPACE);
    // The roles for users are bound by no one in the chart: the cluster's view, edit and admin aggregate them.
    const userRoles = objects.filter((object) => componentOf(object) === 'user-roles');
    const boundRoles = objects
      .filter((object) => object.kind === 'RoleBinding' || object.kind === 'ClusterRoleBinding')
      .map((binding) => (binding.roleRef as { name: string }).name);
    expect(userRoles.map((role) => role.metadata.name).filter((name) => boundRoles.includes(name))).toEqual(
      [],
    );
    const clusterWrites = objects
      .filter((object) => object.kind === 'ClusterRole' && !userRoles.includes(object))
      .flatMap((role) => role.rules as PolicyRule[])
      .filter((r) => r.verbs.some((verb) => ['create', 'update', 'patch', 'delete'].includes(verb)));
    expect(clusterWrites).toEqual([
      rule('acl.policygrant.dev', ['policygrants'], ['list', 'watch', 'patch']),
      rule('acl.policygrant.dev', ['policygrants/status'], ['update']),
      rule('events.k8s.io', ['events'], ['create']),
      rule('authentication.k8s.io', ['tokenreviews'], ['create']),
    ]);
  });

  it('the decision service gets a token and TokenReview rights only when it verifies ServiceAccount tokens', async () => {
    const off = await renderChart(NAMESPACE);
    expect(deployment(off, 'decision-service').pod.automountServiceAccountToken).toBe(false);
    const on = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      decisionService: { tokenReview: { enabled: true } },
    });
    expect(deployment(on, 'decision-service').pod.automountServiceAccountToken).toBe(true);
    expect(rulesOf(on, 'decision-service', 'ClusterRole')).toEqual([
      rule('authentication.k8s.io', ['tokenreviews'], ['create']),
    ]);
  });

  it('the controller has no Lease rights without leader election', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      controller: { replicas: 1, leaderElection: { enabled: false } },
    });
    const withoutLeases = EXPECTED_RBAC.controller?.Role.filter(
      (granted) => !granted.apiGroups.includes('coordination.k8s.io'),
    );
    expect(rulesOf(objects, 'controller', 'Role')).toEqual(withoutLeases);
  });

  it('ServiceAccounts never mount a token by default; only the pods that call the API server opt in', async () => {
    const objects = await renderChart(NAMESPACE, EVERY_FEATURE_VALUES);
    for (const account of objects.filter((object) => object.kind === 'ServiceAccount'))
      expect(account.automountServiceAccountToken).toBe(false);
    expect(deployment(objects, 'spicedb').pod.automountServiceAccountToken).toBe(false);
  });
});

describe('the service containers', () => {
  it.each(SERVICES)(
    '%s: runs the image entrypoint with its own name, probes /healthz/live and /healthz/ready',
    async (name) => {
      const { container, pod } = deployment(await renderChart(NAMESPACE), name);
      expect(container.args).toEqual([name]);
      expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz/live', port: 'http' });
      expect(container.readinessProbe.httpGet).toEqual({ path: '/healthz/ready', port: 'http' });
      expect(pod.serviceAccountName).toBe(`pgo-policy-grant-operator-${name}`);
      expect(container.volumeMounts).toContainEqual(
        expect.objectContaining({ name: 'tmp', mountPath: '/tmp' }),
      );
    },
  );

  it('the controller runs two replicas with leader election in its namespace', async () => {
    const objects = await renderChart(NAMESPACE);
    const { replicas, container } = deployment(objects, 'controller');
    expect(replicas).toBe(2);
    const settings = objects.find((object) => componentOf(object) === 'settings')?.data as Record<
      string,
      string
    >;
    expect(settings.LEADER_ELECTION).toBe('true');
    expect(container.env).toContainEqual({
      name: 'LEADER_ELECTION_NAMESPACE',
      valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
    });
    // The Lease the controller takes is the one its Role lets it renew.
    const leaseName = rulesOf(objects, 'controller', 'Role').flatMap((r) => r.resourceNames ?? []);
    expect(container.env).toContainEqual({ name: 'LEADER_ELECTION_ID', value: leaseName[0] });
  });

  it.each([
    ['controller', 384],
    ['acl-api', 320],
    ['decision-service', 256],
  ])(
    'bounds the %s’s V8 heap to %i MB below its memory limit, keeping source maps',
    async (name, megabytes) => {
      const { container } = deployment(await renderChart(NAMESPACE), name);
      expect(container.env).toContainEqual({
        name: 'NODE_OPTIONS',
        value: `--enable-source-maps --max-old-space-size=${megabytes}`,
      });
    },
  );

  it('leaves Node’s default heap bound when maxHeapMegabytes is 0', async () => {
    const unbounded = { maxHeapMegabytes: 0 };
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      controller: unbounded,
      aclApi: unbounded,
      decisionService: unbounded,
    });
    for (const name of SERVICES) {
      expect(deployment(objects, name).container.env.map((variable) => variable.name)).not.toContain(
        'NODE_OPTIONS',
      );
    }
  });

  it('every service writes grants to (and trusts grants in) the namespace it runs in', async () => {
    const objects = await renderChart(NAMESPACE);
    for (const name of SERVICES)
      expect(deployment(objects, name).container.env).toContainEqual({
        name: 'ACL_NAMESPACE',
        valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } },
      });
  });

  it('the autoscaler owns the decision service replica count when enabled', async () => {
    const objects = await renderChart(NAMESPACE, EVERY_FEATURE_VALUES);
    expect(deployment(objects, 'decision-service').replicas).toBeUndefined();
    const autoscaler = objects.find((object) => object.kind === 'HorizontalPodAutoscaler');
    expect(autoscaler?.spec).toMatchObject({
      scaleTargetRef: { name: 'pgo-policy-grant-operator-decision-service' },
    });
  });
});

describe('configuration', () => {
  it('the SpiceDB schema and registry ConfigMap holds src/spicedb/ byte for byte, mounted over the image copies', async () => {
    const objects = await renderChart(NAMESPACE);
    const model = objects.find((object) => componentOf(object) === 'spicedb-model')?.data as Record<
      string,
      string
    >;
    for (const file of ['schema.zed', 'registry.yaml']) {
      expect(model[file]).toBe(readFileSync(join(REPO_ROOT, 'src/spicedb', file), 'utf8'));
      for (const name of SERVICES)
        expect(deployment(objects, name).container.volumeMounts).toContainEqual(
          expect.objectContaining({
            name: 'spicedb-model',
            mountPath: `/app/dist/spicedb/${file}`,
            subPath: file,
          }),
        );
    }
  });

  it('hands every setting to the services under the variable names they read', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      logLevel: 'debug',
      errorNamespace: 'acme',
      auth: {
        jwt: { issuer: 'https://id.example/', audience: 'acl', algorithms: ['RS256', 'ES256'], maxAge: '1h' },
        jwks: { url: 'https://id.example/jwks' },
      },
      aclApi: {
        basePath: '/v9',
        quotas: { delegationsPerUser: 7, agentsPerUser: 3, accessRequestsPerUser: 9 },
      },
      audit: { migrations: 'skip', retentionDays: 90 },
      controller: {
        resyncPeriod: '5m',
        accessRequestPendingTtl: '48h',
        garbageCollection: { enabled: false, retention: '24h' },
        leaderElection: {
          enabled: true,
          exitOnLoss: false,
          leaseDuration: '20s',
          renewDeadline: '12s',
          retryPeriod: '3s',
        },
        workers: 6,
        labelSelector: 'shard in (a,b)',
      },
      decisionService: {
        checkTimeout: '750ms',
        publicUrl: 'https://gateway.example/decision',
        revisionBarrier: { liveness: '3s' },
        cache: { enabled: false, maxEntries: 500, allowTtl: '2s', denyTtl: '250ms' },
        batching: { enabled: false, maxChecks: 25, concurrency: 8 },
        checkCallers: {
          roles: ['gateway', 'decision_client'],
          serviceAccounts: ['data-plane:gateway', 'apps:files'],
        },
        searchCallers: {
          roles: ['search_client'],
          platformRoles: ['platform_search_client', 'indexer'],
          serviceAccounts: ['data-plane:indexer'],
        },
        pageTokens: { keys: ['k'.repeat(32)] },
        tokenReview: {
          enabled: true,
          audiences: ['a', 'b'],
          issuers: ['https://oidc.example/1'],
          concurrency: 3,
          queue: 9,
        },
      },
      rateLimits: {
        check: '5000/1s',
        read: 'off',
        write: '10/1m',
        authFailures: '5/10m',
        basicAuth: { concurrency: 2, queue: 4 },
      },
      ...TRUSTED_GATEWAY,
    });
    expect(objects.find((object) => componentOf(object) === 'settings')?.data).toEqual({
      LOG_LEVEL: 'debug',
      ERROR_NAMESPACE: 'acme',
      SPICEDB_TLS: 'tls',
      JWT_ISSUER: 'https://id.example/',
      JWT_AUDIENCE: 'acl',
      RATE_LIMIT_CHECK: '5000/1s',
      RATE_LIMIT_READ: 'off',
      RATE_LIMIT_WRITE: '10/1m',
      AUTH_FAILURE_LIMIT: '5/10m',
      BASIC_AUTH_CONCURRENCY: '2',
      BASIC_AUTH_QUEUE: '4',
      TRUST_PROXY: '10.0.0.0/16',
      JWT_ALGORITHMS: 'RS256,ES256',
      ROLES_CLAIM: 'roles',
      ORG_CLAIM: 'org',
      JWT_MAX_AGE: '1h',
      JWKS_URL: 'https://id.example/jwks',
      ACL_PORT: '8080',
      ACL_BASE_PATH: '/v9',
      ACL_MAX_DELEGATIONS_PER_USER: '7',
      ACL_MAX_AGENTS_PER_USER: '3',
      ACL_MAX_ACCESS_REQUESTS_PER_USER: '9',
      AUDIT_MIGRATIONS: 'skip',
      AUDIT_RETENTION_DAYS: '90',
      CONTROLLER_PORT: '8082',
      RESYNC_PERIOD: '5m',
      LEADER_ELECTION: 'true',
      EXIT_ON_LOST_LEADERSHIP: 'false',
      LEASE_DURATION: '20s',
      RENEW_DEADLINE: '12s',
      RETRY_PERIOD: '3s',
      MAX_CONCURRENT_RECONCILES: '6',
      ACCESS_REQUEST_PENDING_TTL: '48h',
      GARBAGE_COLLECTION: 'false',
      GARBAGE_COLLECTION_RETENTION: '24h',
      WATCH_LABEL_SELECTOR: 'shard in (a,b)',
      DECISION_PORT: '8081',
      CHECK_TIMEOUT: '750ms',
      DECISION_PUBLIC_URL: 'https://gateway.example/decision',
      DECISION_SERVICE: 'pgo-policy-grant-operator-decision-service',
      REVISION_BARRIER_LIVENESS: '3s',
      DECISION_CACHE: 'false',
      DECISION_CACHE_MAX_ENTRIES: '500',
      DECISION_CACHE_ALLOW_TTL: '2s',
      DECISION_CACHE_DENY_TTL: '250ms',
      CHECK_BATCHING: 'false',
      CHECK_BATCH_MAX: '25',
      CHECK_BATCH_CONCURRENCY: '8',
      DECISION_CLIENT_ROLES: 'gateway,decision_client',
      DECISION_CLIENT_SERVICE_ACCOUNTS: 'data-plane:gateway,apps:files',
      DECISION_SEARCH_ROLES: 'search_client',
      DECISION_SEARCH_PLATFORM_ROLES: 'platform_search_client,indexer',
      DECISION_SEARCH_SERVICE_ACCOUNTS: 'data-plane:indexer',
      TOKEN_REVIEW: 'true',
      TOKEN_REVIEW_AUDIENCES: 'a,b',
      TOKEN_REVIEW_ISSUERS: 'https://oidc.example/1',
      TOKEN_REVIEW_CONCURRENCY: '3',
      TOKEN_REVIEW_QUEUE: '9',
    });
  });

  it('lets only decision_client check, and reviews ServiceAccount tokens for the service’s own audience, by default', async () => {
    const settings = (await renderChart(NAMESPACE)).find(
      (object) => componentOf(object) === 'settings',
    )?.data;
    expect(settings).toMatchObject({
      DECISION_CLIENT_ROLES: 'decision_client',
      TOKEN_REVIEW_AUDIENCES: 'policy-grant-decision',
    });
    expect(settings).not.toHaveProperty('DECISION_CLIENT_SERVICE_ACCOUNTS');
    // Nobody searches by default.
    expect(settings).toMatchObject({ DECISION_SEARCH_ROLES: '', DECISION_SEARCH_PLATFORM_ROLES: '' });
    expect(settings).not.toHaveProperty('DECISION_SEARCH_SERVICE_ACCOUNTS');
  });

  it('gives the decision service its page token keys from a Secret, and rolls it when they change', async () => {
    const pageTokenKeys = (container: ReturnType<typeof deployment>['container']) =>
      container.env.find((variable) => variable.name === 'PAGE_TOKEN_KEYS');
    const [newKey, oldKey] = ['n'.repeat(32), 'o'.repeat(32)];
    const render = (keys: string[]) =>
      renderChart(NAMESPACE, {
        ...REQUIRED_VALUES,
        decisionService: { pageTokens: { keys, existingSecret: '' } },
      });
    const objects = await render([newKey, oldKey]);
    const secret = objects.find(
      (object) => object.kind === 'Secret' && object.metadata.name.endsWith('-decision-page-tokens'),
    ) as KubeObject & { data: Record<string, string> };
    expect(Buffer.from(secret.data.keys ?? '', 'base64').toString()).toBe(`${newKey},${oldKey}`);
    const { container } = deployment(objects, 'decision-service');
    expect(pageTokenKeys(container)?.valueFrom).toEqual({
      secretKeyRef: { name: secret.metadata.name, key: 'keys' },
    });
    const checksum = async (keys: string[]) =>
      (
        (await render(keys)).find(
          (object) => object.kind === 'Deployment' && componentOf(object) === 'decision-service',
        )?.spec as { template: { metadata: { annotations: Record<string, string> } } }
      ).template.metadata.annotations['checksum/page-token-keys'];
    expect(await checksum([newKey])).not.toBe(await checksum([newKey, oldKey]));

    const existing = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      decisionService: { pageTokens: { keys: [], existingSecret: 'own-keys' } },
    });
    expect(pageTokenKeys(deployment(existing, 'decision-service').container)?.valueFrom).toEqual({
      secretKeyRef: { name: 'own-keys', key: 'keys' },
    });
    expect(existing.some((object) => object.metadata.name.endsWith('-decision-page-tokens'))).toBe(false);
    // None given: no variable, each replica signs with a key of its own.
    expect(
      pageTokenKeys(deployment(await renderChart(NAMESPACE), 'decision-service').container),
    ).toBeUndefined();
  });

  it("by default only the migrations hook Job holds the audit database owner's connection string; the services get the writer's and the chain key", async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      audit: {
        database: { existingSecret: 'audit-db', urlKey: 'service', migrationUrlKey: 'owner' },
        chainKey: { existingSecret: 'chain', key: 'mac' },
        retentionDays: 30,
      },
    });
    const writer = {
      name: 'DATABASE_URL',
      valueFrom: { secretKeyRef: { name: 'audit-db', key: 'service' } },
    };
    const chainKey = { name: 'AUDIT_CHAIN_KEY', valueFrom: { secretKeyRef: { name: 'chain', key: 'mac' } } };
    for (const service of ['acl-api', 'controller']) {
      const env = deployment(objects, service).container.env;
      expect(env).toEqual(expect.arrayContaining([writer, chainKey]));
      expect(JSON.stringify(env)).not.toContain('DATABASE_MIGRATION_URL');
    }
    expect(JSON.stringify(deployment(objects, 'decision-service').container.env)).not.toMatch(
      /DATABASE|AUDIT/,
    );
    expect(objects.find((object) => componentOf(object) === 'settings')?.data).toMatchObject({
      AUDIT_MIGRATIONS: 'skip',
    });

    const job = objects.find((object) => object.kind === 'Job' && componentOf(object) === 'audit-migrations');
    expect(job?.metadata.annotations).toMatchObject({ 'helm.sh/hook': 'pre-install,pre-upgrade' });
    const pod = (job?.spec as { template: PodTemplate }).template.spec as {
      automountServiceAccountToken: boolean;
      containers: { args: string[]; env: unknown[] }[];
    };
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.containers[0]?.args).toEqual(['audit-migrate']);
    expect(pod.containers[0]?.env).toEqual(
      expect.arrayContaining([
        { name: 'DATABASE_MIGRATION_URL', valueFrom: { secretKeyRef: { name: 'audit-db', key: 'owner' } } },
        { name: 'AUDIT_RETENTION_DAYS', value: '30' },
      ]),
    );
    expect(JSON.stringify(pod.containers[0]?.env), 'the owner never holds the chain key').not.toContain(
      'AUDIT_CHAIN_KEY',
    );
  });

  it('with audit.migrations startup the ACL API migrates with the owner’s string, and no Job renders', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      audit: { migrations: 'startup', database: { existingSecret: 'audit-db', migrationUrlKey: 'owner' } },
    });
    expect(deployment(objects, 'acl-api').container.env).toContainEqual({
      name: 'DATABASE_MIGRATION_URL',
      valueFrom: { secretKeyRef: { name: 'audit-db', key: 'owner', optional: true } },
    });
    expect(JSON.stringify(deployment(objects, 'controller').container.env)).not.toContain(
      'DATABASE_MIGRATION_URL',
    );
    expect(objects.some((object) => object.kind === 'Job')).toBe(false);
    expect(objects.find((object) => componentOf(object) === 'settings')?.data).toMatchObject({
      AUDIT_MIGRATIONS: 'startup',
    });
  });

  it('SpiceDB endpoint and key come from the Secret the values name', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      spicedb: {
        existingSecret: 'mine',
        existingSecretKeys: { endpoint: 'host', presharedKey: 'token' },
        readOnly: READ_ONLY_SPICEDB,
      },
    });
    expect(objects.some((object) => object.kind === 'Secret')).toBe(false);
    const env = deployment(objects, 'controller').container.env;
    expect(env).toContainEqual({
      name: 'SPICEDB_ENDPOINT',
      valueFrom: { secretKeyRef: { name: 'mine', key: 'host' } },
    });
    expect(env).toContainEqual({
      name: 'SPICEDB_TOKEN',
      valueFrom: { secretKeyRef: { name: 'mine', key: 'token' } },
    });
  });

  it('only the controller and the decision service get SpiceDB: the ACL API has no key, CA or admission', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      spicedb: { existingSecret: 'mine', tls: { caSecret: 'spicedb-ca' }, readOnly: { enabled: false } },
    });
    const spicedbVariables = (name: string) =>
      deployment(objects, name)
        .container.env.map((variable) => variable.name)
        .filter((variable) => variable.startsWith('SPICEDB_'));
    const mountNames = (name: string) =>
      deployment(objects, name).container.volumeMounts.map((mount) => mount.name);
    expect(spicedbVariables('acl-api')).toEqual([]);
    for (const name of ['controller', 'decision-service']) {
      expect(spicedbVariables(name)).toEqual(['SPICEDB_ENDPOINT', 'SPICEDB_TOKEN', 'SPICEDB_CA_FILE']);
      expect(mountNames(name)).toContain('spicedb-ca');
    }
    expect(mountNames('acl-api')).not.toContain('spicedb-ca');
    // The registry still: the ACL API judges grants as the controller does.
    expect(mountNames('acl-api')).toContain('spicedb-model');
    const bundled = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      spicedb: { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
      networkPolicy: { enabled: true },
    });
    const policy = bundled.find(
      (object) => object.kind === 'NetworkPolicy' && componentOf(object) === 'spicedb',
    ) as unknown as {
      spec: { ingress: { from: { podSelector: { matchExpressions: { values: string[] }[] } }[] }[] };
    };
    expect(policy.spec.ingress[0]?.from[0]?.podSelector.matchExpressions[0]?.values).toEqual([
      'controller',
      'decision-service',
    ]);
  });

  it('the decision service checks through a read-only SpiceDB on the same datastore, with a key of its own; only the controller holds the writing key', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      spicedb: {
        existingSecret: 'writer',
        readOnly: {
          datastore: { existingSecret: 'datastore', uriKey: 'dsn' },
          presharedKey: 'read-only-key',
        },
      },
    });
    const readOnly = objects.find(
      (object) => object.kind === 'Deployment' && componentOf(object) === 'spicedb-read-only',
    );
    const container = (readOnly?.spec as { template: PodTemplate }).template.spec.containers as {
      args: string[];
      env: unknown[];
    }[];
    expect(container[0]?.args).toEqual(
      expect.arrayContaining(['serve', '--datastore-readonly', '--datastore-engine=postgres']),
    );
    const keySecret = 'pgo-policy-grant-operator-spicedb-read-only';
    expect(container[0]?.env).toEqual([
      {
        name: 'SPICEDB_GRPC_PRESHARED_KEY',
        valueFrom: { secretKeyRef: { name: keySecret, key: 'presharedKey' } },
      },
      { name: 'SPICEDB_DATASTORE_CONN_URI', valueFrom: { secretKeyRef: { name: 'datastore', key: 'dsn' } } },
    ]);
    const secret = objects.find((object) => object.kind === 'Secret' && object.metadata.name === keySecret);
    expect(Buffer.from((secret?.data as { presharedKey: string }).presharedKey, 'base64').toString()).toBe(
      'read-only-key',
    );
    const decisionEnv = deployment(objects, 'decision-service').container.env;
    expect(decisionEnv).toEqual(
      expect.arrayContaining([
        {
          name: 'SPICEDB_ENDPOINT',
          value: `pgo-policy-grant-operator-spicedb-read-only.${NAMESPACE}.svc:50051`,
        },
        { name: 'SPICEDB_TOKEN', valueFrom: { secretKeyRef: { name: keySecret, key: 'presharedKey' } } },
        { name: 'SPICEDB_TLS', value: 'plaintext' },
      ]),
    );
    expect(JSON.stringify(decisionEnv), 'no writing key').not.toContain('"writer"');
    expect(deployment(objects, 'controller').container.env).toContainEqual({
      name: 'SPICEDB_TOKEN',
      valueFrom: { secretKeyRef: { name: 'writer', key: 'presharedKey' } },
    });
  });

  it('with the bundled SpiceDB (memory: one process only) there is no read-only SpiceDB, and none when disabled', async () => {
    for (const spicedb of [
      { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
      { existingSecret: 'writer', readOnly: { enabled: false } },
    ]) {
      const objects = await renderChart(NAMESPACE, { ...REQUIRED_VALUES, spicedb });
      expect(objects.some((object) => componentOf(object) === 'spicedb-read-only')).toBe(false);
      expect(JSON.stringify(deployment(objects, 'decision-service').container.env)).not.toContain(
        'read-only',
      );
    }
  });

  it("the services' NetworkPolicies are on by default once the decision service is exposed; the read-only SpiceDB's always", async () => {
    const policies = async (values: object) =>
      (await renderChart(NAMESPACE, { ...REQUIRED_VALUES, ...values }))
        .filter((object) => object.kind === 'NetworkPolicy')
        .map(componentOf)
        .sort();
    expect(await policies({})).toEqual(['spicedb-read-only']);
    const exposedValues = {
      ...TRUSTED_GATEWAY,
      httpRoute: { enabled: true, parentRefs: [{ name: 'public' }] },
    };
    const exposed = await policies(exposedValues);
    // The decision service twice: its own policy, and the ACL API's confirmations for Prefer: wait.
    expect(exposed).toEqual(
      ['acl-api', 'controller', 'decision-service', 'decision-service', 'spicedb-read-only'].sort(),
    );
    // A trusted proxy turns them on even where the decision service is not exposed.
    const aclOnly = await policies({
      ...TRUSTED_GATEWAY,
      ingress: { enabled: true, exposeDecisionService: false },
    });
    expect(aclOnly).toEqual(exposed);
    expect(await policies({ networkPolicy: { enabled: false } })).toEqual([]);
  });

  it('with a trusted proxy, only its pods (and Prometheus) may reach the ports that believe X-Forwarded-For', async () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      ...TRUSTED_GATEWAY,
      ingress: { enabled: true },
      networkPolicy: { enabled: 'auto', metricsFrom: [monitoring] },
    });
    const settings = objects.find((object) => componentOf(object) === 'settings')?.data as Record<
      string,
      string
    >;
    expect(settings.TRUST_PROXY).toBe(TRUSTED_GATEWAY.trustProxy);
    const admitted = (component: string) =>
      (
        objects.find((object) => object.kind === 'NetworkPolicy' && componentOf(object) === component)
          ?.spec as {
          ingress: { ports: { port: number }[]; from?: object[] }[];
        }
      ).ingress;
    expect(admitted('acl-api')).toEqual([
      { ports: [{ port: 8080, protocol: 'TCP' }], from: [...TRUSTED_GATEWAY.trustProxyFrom, monitoring] },
    ]);
    expect(admitted('decision-service')).toEqual([
      { ports: [{ port: 8081, protocol: 'TCP' }], from: [...TRUSTED_GATEWAY.trustProxyFrom, monitoring] },
    ]);
    expect(admitted('controller')[0]?.from).toEqual([monitoring]);
  });

  it('the bundled SpiceDB: a plaintext endpoint in the release namespace, the given key, one replica', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      spicedb: { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
    });
    const secret = objects.find((object) => object.kind === 'Secret')?.data as Record<string, string>;
    const decode = (value = '') => Buffer.from(value, 'base64').toString();
    expect(decode(secret.endpoint)).toBe(`pgo-policy-grant-operator-spicedb.${NAMESPACE}.svc:50051`);
    expect(decode(secret.presharedKey)).toBe('bundled-dev-key');
    const settings = objects.find((object) => componentOf(object) === 'settings')?.data as Record<
      string,
      string
    >;
    expect(settings.SPICEDB_TLS).toBe('plaintext');
    expect(deployment(objects, 'spicedb').replicas).toBe(1);
  });

  it('a JWKS file from a Secret is mounted into the ACL API and the decision service only', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      auth: { ...REQUIRED_VALUES.auth, jwks: { existingSecret: 'jwks', key: 'keys.json' } },
    });
    for (const name of ['acl-api', 'decision-service']) {
      const { container, pod } = deployment(objects, name);
      expect(container.env).toContainEqual({
        name: 'JWKS_FILE',
        value: '/etc/policy-grant-operator/jwks/jwks.json',
      });
      expect(pod.volumes).toContainEqual({
        name: 'jwks',
        secret: { secretName: 'jwks', items: [{ key: 'keys.json', path: 'jwks.json' }] },
      });
    }
    expect(deployment(objects, 'controller').container.env.map((variable) => variable.name)).not.toContain(
      'JWKS_FILE',
    );
  });
});

describe('the read-only SpiceDB', () => {
  interface NetworkPolicyRule {
    ports: { port: string }[];
    from?: Record<string, unknown>[];
  }

  /** The chart rendered with these read-only SpiceDB values, beside other values (SpiceDB's merged). */
  const readOnlyOf = async (
    readOnly: object,
    { spicedb, ...values }: { spicedb?: object; [value: string]: unknown } = {},
  ) => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      ...values,
      spicedb: { existingSecret: 'writer', ...spicedb, readOnly: { ...READ_ONLY_SPICEDB, ...readOnly } },
    });
    const ofReadOnly = (kind: string) =>
      objects.find((object) => object.kind === kind && componentOf(object) === 'spicedb-read-only');
    const { pod, container } = deployment(objects, 'spicedb-read-only');
    const spicedbContainer = container as unknown as { image: string; imagePullPolicy: string } & Omit<
      typeof container,
      'readinessProbe'
    > & { readinessProbe: object };
    const policy = ofReadOnly('NetworkPolicy')?.spec as { ingress: NetworkPolicyRule[] } | undefined;
    const budget = ofReadOnly('PodDisruptionBudget')?.spec;
    return { objects, pod, container: spicedbContainer, policy, budget };
  };

  it('runs its own image, not the bundled SpiceDB’s', async () => {
    const { container } = await readOnlyOf(
      { image: { repository: 'registry.internal/mirror/spicedb', tag: 'v1.57.1', pullPolicy: 'Always' } },
      { spicedb: { bundled: { image: { repository: 'elsewhere/spicedb' } } } },
    );
    expect(container.image).toBe('registry.internal/mirror/spicedb:v1.57.1');
    expect(container.imagePullPolicy).toBe('Always');
  });

  it('polls PostgreSQL for its Watch every 100 ms by default, another period when given, SpiceDB’s own elsewhere', async () => {
    const heartbeats = (args: string[]) => args.filter((arg) => arg.startsWith('--watch-api-heartbeat'));
    expect(heartbeats((await readOnlyOf({})).container.args)).toEqual(['--watch-api-heartbeat=100ms']);
    expect(heartbeats((await readOnlyOf({ watchHeartbeat: '250ms' })).container.args)).toEqual([
      '--watch-api-heartbeat=250ms',
    ]);
    const cockroach = await readOnlyOf({ datastore: { engine: 'cockroachdb', existingSecret: 'ds' } });
    expect(heartbeats(cockroach.container.args)).toEqual([]);
  });

  it('sizes its connection pools from the values, and extra flags come last, so they win', async () => {
    const { container } = await readOnlyOf({
      connectionPool: { read: { maxOpen: 6, minOpen: 2 }, write: { maxOpen: 1, minOpen: 0 } },
      extraArgs: ['--log-level=warn', '--datastore-conn-pool-read-max-open=4'],
    });
    expect(container.args.filter((arg) => arg.startsWith('--datastore-conn-pool-'))).toEqual([
      '--datastore-conn-pool-read-max-open=6',
      '--datastore-conn-pool-read-min-open=2',
      '--datastore-conn-pool-write-max-open=1',
      '--datastore-conn-pool-write-min-open=0',
      '--datastore-conn-pool-read-max-open=4',
    ]);
    expect(container.args.at(-2)).toBe('--log-level=warn');
  });

  it('rolls a new replica in before an old one goes, which serves until its Service has let it go', async () => {
    const { objects, pod, container } = await readOnlyOf({});
    const rollout = objects.find(
      (object) => object.kind === 'Deployment' && componentOf(object) === 'spicedb-read-only',
    )?.spec as { strategy: unknown };
    expect(rollout.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
    });
    expect((container as { lifecycle?: unknown }).lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(pod.terminationGracePeriodSeconds).toBe(30);
    const withoutSleep = await readOnlyOf({ preStopSleepSeconds: 0 });
    expect((withoutSleep.container as { lifecycle?: unknown }).lifecycle).toBeUndefined();
  });

  it('gives a start slowed by a busy node its time: liveness counts once it has served', async () => {
    const { container } = await readOnlyOf({});
    const probes = container as unknown as Record<
      string,
      { timeoutSeconds?: number; failureThreshold?: number }
    >;
    expect(probes.startupProbe).toMatchObject({ grpc: { port: 50051 }, failureThreshold: 150 });
    expect(probes.readinessProbe?.timeoutSeconds).toBe(3);
    expect(probes.livenessProbe?.timeoutSeconds).toBe(3);
  });

  it('has a PodDisruptionBudget, and none when disabled', async () => {
    expect((await readOnlyOf({})).budget).toMatchObject({ maxUnavailable: 1 });
    const disabled = await readOnlyOf({
      podDisruptionBudget: { enabled: false, maxUnavailable: 1, minAvailable: '' },
    });
    expect(disabled.budget).toBeUndefined();
  });

  it('admits only the decision service to its gRPC port, and Prometheus (metricsFrom) to its metrics', async () => {
    const monitoring = {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
    };
    const { policy } = await readOnlyOf({}, { networkPolicy: { metricsFrom: [monitoring] } });
    expect(policy?.ingress).toEqual([
      {
        ports: [{ port: 'grpc', protocol: 'TCP' }],
        from: [
          {
            podSelector: {
              matchLabels: {
                'app.kubernetes.io/name': 'policy-grant-operator',
                'app.kubernetes.io/instance': 'pgo',
                'app.kubernetes.io/component': 'decision-service',
              },
            },
          },
        ],
      },
      { ports: [{ port: 'metrics', protocol: 'TCP' }], from: [monitoring] },
    ]);
  });

  it('serves TLS with the certificate Secret, and the decision service verifies it with the CA the values name', async () => {
    const { container, pod, objects } = await readOnlyOf(
      { tls: { certificateSecret: 'read-only-tls', caSecret: 'read-only-ca', caSecretKey: 'bundle.pem' } },
      { spicedb: { tls: { caSecret: 'writer-ca' } } },
    );
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--grpc-tls-cert-path=/etc/spicedb-tls/tls.crt',
        '--grpc-tls-key-path=/etc/spicedb-tls/tls.key',
      ]),
    );
    expect(pod.volumes).toContainEqual({ name: 'tls', secret: { secretName: 'read-only-tls' } });
    // The kubelet's gRPC probe cannot speak TLS.
    expect(container.readinessProbe).toMatchObject({ tcpSocket: { port: 'grpc' } });
    const decision = deployment(objects, 'decision-service');
    expect(decision.container.env).toEqual(
      expect.arrayContaining([
        { name: 'SPICEDB_TLS', value: 'tls' },
        { name: 'SPICEDB_CA_FILE', value: '/etc/policy-grant-operator/spicedb-ca/ca.crt' },
      ]),
    );
    expect(decision.pod.volumes).toContainEqual({
      name: 'spicedb-ca',
      secret: { secretName: 'read-only-ca', items: [{ key: 'bundle.pem', path: 'ca.crt' }] },
    });
    // The controller keeps the writing SpiceDB's CA.
    expect(deployment(objects, 'controller').pod.volumes).toContainEqual({
      name: 'spicedb-ca',
      secret: { secretName: 'writer-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] },
    });
  });

  it('is plaintext without a certificate: the decision service gets no CA, not even the writing SpiceDB’s', async () => {
    const { container, objects } = await readOnlyOf({}, { spicedb: { tls: { caSecret: 'writer-ca' } } });
    expect(container.readinessProbe).toMatchObject({ grpc: { port: 50051 } });
    const decision = deployment(objects, 'decision-service');
    expect(decision.container.env).toContainEqual({ name: 'SPICEDB_TLS', value: 'plaintext' });
    expect(JSON.stringify(decision.pod)).not.toContain('spicedb-ca');
  });
});

describe('gateway routes (the spec strip-prefix contract)', () => {
  const values = {
    ...REQUIRED_VALUES,
    aclApi: { basePath: '/v2' },
    ...TRUSTED_GATEWAY,
    httpRoute: { enabled: true, parentRefs: [{ name: 'public' }], aclPathPrefix: '/acl' },
    ingress: { enabled: true, aclPathPrefix: '/acl' },
  };

  it('HTTPRoute: /acl/... rewritten onto /v2/... at the ACL API, /v1/check to the decision service', async () => {
    const route = (await renderChart(NAMESPACE, values)).find((object) => object.kind === 'HTTPRoute');
    expect((route?.spec as { rules: unknown[] }).rules).toEqual([
      {
        matches: [{ path: { type: 'PathPrefix', value: '/acl' } }],
        filters: [
          {
            type: 'URLRewrite',
            urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/v2' } },
          },
        ],
        backendRefs: [{ name: 'pgo-policy-grant-operator-acl-api', port: 8080 }],
      },
      {
        matches: [{ path: { type: 'Exact', value: '/v1/check' } }],
        backendRefs: [{ name: 'pgo-policy-grant-operator-decision-service', port: 8081 }],
      },
    ]);
  });

  it('Ingress: ingress-nginx rewrites /acl/<rest> to /v2/<rest>; /v1/check has its own Ingress, not rewritten', async () => {
    const ingresses = (await renderChart(NAMESPACE, values)).filter((object) => object.kind === 'Ingress');
    const [acl, decision] = ingresses;
    expect(acl?.metadata.annotations).toEqual({
      'nginx.ingress.kubernetes.io/use-regex': 'true',
      'nginx.ingress.kubernetes.io/rewrite-target': '/v2/$2',
    });
    const aclPaths = (acl?.spec as { rules: { http: { paths: { path: string }[] } }[] }).rules[0]?.http.paths;
    const pattern = new RegExp(`^${aclPaths?.[0]?.path}$`);
    // What ingress-nginx does with the capture groups: $2 is the rest of the path after the prefix.
    expect('/acl/policy/consumer'.replace(pattern, '/v2/$2')).toBe('/v2/policy/consumer');
    expect('/acl'.replace(pattern, '/v2/$2')).toBe('/v2/');
    expect(pattern.test('/aclx/policy')).toBe(false);
    expect(decision?.metadata.annotations).toBeUndefined();
    expect((decision?.spec as { rules: { http: unknown }[] }).rules[0]?.http).toEqual({
      paths: [
        {
          path: '/v1/check',
          pathType: 'Exact',
          backend: {
            service: { name: 'pgo-policy-grant-operator-decision-service', port: { name: 'http' } },
          },
        },
      ],
    });
  });
});

describe('the namespace-binding admission policy', () => {
  const admission = (objects: KubeObject[]) => objects.filter((o) => componentOf(o) === 'namespace-binding');
  const allowedGroups = (policy: KubeObject | undefined) => {
    const variables = (policy?.spec as { variables: { name: string; expression: string }[] }).variables;
    return JSON.parse(variables.find((v) => v.name === 'allowedGroups')?.expression ?? 'null') as unknown;
  };
  const variable = (policy: KubeObject | undefined, name: string) =>
    (policy?.spec as { variables: { name: string; expression: string }[] }).variables.find(
      (v) => v.name === name,
    )?.expression;

  it('is on by default: a policy on namespace creates and updates that change the label, and its Deny binding', async () => {
    const [policy, binding] = admission(await renderChart(NAMESPACE));
    expect([policy?.kind, binding?.kind]).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    expect(policy?.metadata.name).toBe('pgo-policy-grant-operator-namespace-binding');
    expect(policy?.metadata.namespace).toBeUndefined();
    expect(policy?.spec).toMatchObject({
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'],
          },
        ],
      },
    });
    const [condition] = (policy?.spec as { matchConditions: { expression: string }[] }).matchConditions;
    expect(condition?.expression).toContain(`'${ORGANISATION_LABEL}'`);
    expect(allowedGroups(policy)).toEqual(['system:masters', 'policy-grant-operator:namespace-binders']);
    expect(binding?.spec).toEqual({ policyName: policy?.metadata.name, validationActions: ['Deny'] });
  });

  it('allows the groups the values list, quoted for CEL', async () => {
    const groups = ['system:serviceaccounts:argocd', 'odd "group" \\ name'];
    const [policy] = admission(
      await renderChart(NAMESPACE, { ...REQUIRED_VALUES, namespaceBindingPolicy: { allowedGroups: groups } }),
    );
    expect(allowedGroups(policy)).toEqual(groups);
  });

  it('carries the binders per organisation of the values, and the group prefix', async () => {
    const binders = {
      '3f1c9a52-0b7e-4f55-9a53-8c2d1e6f7a10': { users: ['system:serviceaccount:argocd:tenant-a'] },
    };
    const [policy] = admission(
      await renderChart(NAMESPACE, {
        ...REQUIRED_VALUES,
        namespaceBindingPolicy: { organisationBinders: binders },
      }),
    );
    expect(JSON.parse(variable(policy, 'organisationBinders') ?? 'null')).toEqual(binders);
    expect(JSON.parse(variable(policy, 'organisationGroupPrefix') ?? 'null')).toBe(
      'policy-grant-operator:namespace-binders:',
    );
  });

  it('is left out when disabled', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      namespaceBindingPolicy: { enabled: false },
    });
    expect(admission(objects)).toEqual([]);
    const others = objects.filter((object) => object.kind.startsWith('ValidatingAdmission'));
    expect(new Set(others.map(componentOf))).toEqual(new Set(['grant-marks', 'grant-requester']));
  });
});

describe('the grant admission policies', () => {
  const ACL_API_USER = `system:serviceaccount:${NAMESPACE}:pgo-policy-grant-operator-acl-api`;
  const kindsOf = (objects: KubeObject[], component: string) =>
    objects.filter((object) => componentOf(object) === component).map((object) => object.kind);
  const controllerEnv = (objects: KubeObject[]) => {
    const deployment = objects.find((o) => o.kind === 'Deployment' && componentOf(o) === 'controller');
    const containers = (deployment?.spec as { template: PodTemplate }).template.spec.containers as {
      env: { name: string; value?: string }[];
    }[];
    return Object.fromEntries(containers[0]?.env.map((entry) => [entry.name, entry.value]) ?? []);
  };

  it("are on by default, name the ACL API's ServiceAccount, and the controller trusts the stamp", async () => {
    const objects = await renderChart(NAMESPACE);
    expect(kindsOf(objects, 'grant-marks')).toEqual([
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    expect(kindsOf(objects, 'grant-requester').sort()).toEqual([
      'MutatingAdmissionPolicy',
      'MutatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    const account = objects.find((o) => o.kind === 'ServiceAccount' && componentOf(o) === 'acl-api');
    expect(`system:serviceaccount:${NAMESPACE}:${account?.metadata.name}`).toBe(ACL_API_USER);
    const marks = objects.find(
      (o) => o.kind === 'ValidatingAdmissionPolicy' && componentOf(o) === 'grant-marks',
    );
    const [condition] = (marks?.spec as { matchConditions: { expression: string }[] }).matchConditions;
    expect(condition?.expression).toBe(`request.userInfo.username != ${JSON.stringify(ACL_API_USER)}`);
    expect(controllerEnv(objects)).toMatchObject({
      AUDIT_ACTOR_FROM: 'admission',
      ACL_API_KUBERNETES_USER: ACL_API_USER,
    });
  });

  it('auditActorPolicy.enabled=false leaves the stamp out, and the controller records field managers unverified', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      auditActorPolicy: { enabled: false },
    });
    expect(kindsOf(objects, 'grant-requester')).toEqual([]);
    expect(objects.some((object) => object.kind.startsWith('MutatingAdmission'))).toBe(false);
    expect(kindsOf(objects, 'grant-marks')).toHaveLength(2);
    const env = controllerEnv(objects);
    expect(env.AUDIT_ACTOR_FROM).toBe('field-manager');
    expect(env).not.toHaveProperty('ACL_API_KUBERNETES_USER');
  });

  it('grantMarksPolicy.enabled=false leaves the marks policy out', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      grantMarksPolicy: { enabled: false },
    });
    expect(kindsOf(objects, 'grant-marks')).toEqual([]);
    expect(kindsOf(objects, 'grant-requester')).toHaveLength(4);
  });
});

describe('the image', () => {
  const DIGEST = `sha256:${'0123456789abcdef'.repeat(4)}`;
  const images = (objects: KubeObject[]) =>
    objects
      .filter((object) => object.kind === 'Deployment' || object.kind === 'Pod')
      .filter((object) => !['spicedb', 'spicedb-read-only'].includes(componentOf(object) ?? ''))
      .flatMap((object) => {
        const spec = (object.spec as { template?: PodTemplate }).template?.spec ?? object.spec;
        return (spec as { containers: { image: string }[] }).containers.map((container) => container.image);
      });

  it('defaults to a registry-qualified placeholder at the chart’s appVersion', async () => {
    const found = images(await renderChart(NAMESPACE));
    expect(found.length).toBeGreaterThanOrEqual(6);
    expect(new Set(found)).toEqual(new Set(['registry.example.com/policy-grant-operator:0.1.0']));
  });

  it('image.digest pins every service and test Pod by digest, over the tag', async () => {
    const objects = await renderChart(NAMESPACE, {
      ...REQUIRED_VALUES,
      image: { repository: 'localhost:5001/pgo', tag: 'ignored', digest: DIGEST, pullPolicy: 'IfNotPresent' },
    });
    expect(new Set(images(objects))).toEqual(new Set([`localhost:5001/pgo@${DIGEST}`]));
  });

  it.each(['sha256:abc', `sha512:${'0'.repeat(64)}`, `${DIGEST}0`])(
    'refuses the digest %s',
    async (digest) => {
      const { helm } = await packagingTools();
      const values = { ...REQUIRED_VALUES, image: { repository: 'pgo', pullPolicy: 'Always', digest } };
      await expect(helmTemplate(helm, { namespace: NAMESPACE, values })).rejects.toThrow(/image\/digest/);
    },
  );
});

describe('the object quota of the release namespace', () => {
  const quotaOf = (objects: KubeObject[]) => objects.filter((object) => object.kind === 'ResourceQuota');

  it('bounds every kind the release namespace holds, once enabled, at the sizes the values give', async () => {
    const [quota, ...others] = quotaOf(
      await renderChart(NAMESPACE, { ...REQUIRED_VALUES, resourceQuota: { enabled: true } }),
    );
    expect(others).toEqual([]);
    expect(quota?.metadata.namespace).toBe(NAMESPACE);
    expect((quota?.spec as { hard: Record<string, string> }).hard).toEqual({
      'count/policygrants.acl.policygrant.dev': '200000',
      'count/grantclaims.acl.policygrant.dev': '400000',
      'count/memberships.acl.policygrant.dev': '500000',
      'count/delegations.acl.policygrant.dev': '100000',
      'count/agents.acl.policygrant.dev': '20000',
      'count/accessrequests.acl.policygrant.dev': '100000',
    });
    const sized = quotaOf(
      await renderChart(NAMESPACE, {
        ...REQUIRED_VALUES,
        resourceQuota: { enabled: true, objects: { delegations: 5 } },
      }),
    );
    expect((sized[0]?.spec as { hard: Record<string, string> }).hard).toMatchObject({
      'count/delegations.acl.policygrant.dev': '5',
    });
  });

  it('renders none by default: an object-count quota refuses every create until its status is computed', async () => {
    expect(quotaOf(await renderChart(NAMESPACE))).toEqual([]);
  });
});

describe('values the chart refuses', () => {
  const refused: [string, object, RegExp][] = [
    ['a port out of range', { aclApi: { port: 70000 } }, /aclApi\/port.*maximum/],
    ['an unknown top-level value', { replicaCount: 3 }, /additional properties 'replicaCount' not allowed/],
    ['an unknown nested value', { controller: { leaderElect: true } }, /additional properties 'leaderElect'/],
    ['a log level pino lacks', { logLevel: 'verbose' }, /logLevel.*must be one of/],
    ['replicas as text', { decisionService: { replicas: 'two' } }, /decisionService\/replicas.*want integer/],
    ['a malformed duration', { controller: { resyncPeriod: '10 minutes' } }, /resyncPeriod.*does not match/],
    [
      'an object quota of none',
      { resourceQuota: { objects: { agents: 0 } } },
      /resourceQuota\/objects\/agents.*minimum/,
    ],
    ['an endpoint without a port', { spicedb: { endpoint: 'spicedb' } }, /spicedb\/endpoint.*does not match/],
    ['a base path without the leading slash', { aclApi: { basePath: 'v2' } }, /aclApi\/basePath/],
    [
      'an unsupported JWT algorithm',
      { auth: { jwt: { algorithms: ['HS256'] } } },
      /algorithms\/0.*must be one of/,
    ],
    [
      'binders keyed by something else than an organisation uuid',
      { namespaceBindingPolicy: { organisationBinders: { 'tenant-a': { users: ['a'] } } } },
      /invalid propertyName 'tenant-a'/,
    ],
    [
      'a namespace-binding policy that lets nobody bind',
      { namespaceBindingPolicy: { allowedGroups: [] } },
      /namespaceBindingPolicy\/allowedGroups.*minItems/,
    ],
    ['an HTTPRoute without a Gateway', { httpRoute: { enabled: true } }, /httpRoute\/parentRefs.*minItems/],
    [
      'an HTTPRoute without trustProxy (every caller would share the proxy’s address)',
      { httpRoute: { enabled: true, parentRefs: [{ name: 'public' }] } },
      /httpRoute.enabled needs trustProxy/,
    ],
    ['an Ingress without trustProxy', { ingress: { enabled: true } }, /ingress.enabled needs trustProxy/],
    [
      'a hop count in trustProxy (whoever connects would name any client address)',
      { trustProxy: '1', trustProxyFrom: TRUSTED_GATEWAY.trustProxyFrom },
      /trustProxy: a hop count \('1'\) lets any pod that reaches the ports name any client address/,
    ],
    [
      'trustProxy without the proxies’ pods',
      { trustProxy: '10.0.0.0/16' },
      /trustProxy needs trustProxyFrom: the proxies' pods/,
    ],
    [
      'trustProxy with the NetworkPolicies off',
      { ...TRUSTED_GATEWAY, networkPolicy: { enabled: false } },
      /trustProxy needs the NetworkPolicies/,
    ],
    [
      'trustProxy with other peers admitted to the API ports',
      { ...TRUSTED_GATEWAY, networkPolicy: { enabled: true, apiFrom: [{ podSelector: {} }] } },
      /networkPolicy.apiFrom and trustProxy/,
    ],
    [
      'two JWKS sources',
      { auth: { jwks: { url: 'https://a/', existingSecret: 'b' } } },
      /set exactly one of url/,
    ],
    ['a JWKS URL over http', { auth: { jwks: { url: 'http://idp.example/jwks' } } }, /auth\/jwks\/url/],
    ['a rate limit without its window', { rateLimits: { read: '1200' } }, /rateLimits\/read.*does not match/],
    ['off unquoted (a YAML boolean)', { rateLimits: { write: false } }, /rateLimits\/write.*want string/],
    [
      'no scrypt verification at all',
      { rateLimits: { basicAuth: { concurrency: 0 } } },
      /rateLimits\/basicAuth\/concurrency.*minimum/,
    ],
    [
      'no role that may check',
      { decisionService: { checkCallers: { roles: [] } } },
      /decisionService\/checkCallers\/roles.*minItems/,
    ],
    [
      'a check caller that is not namespace:name',
      { decisionService: { checkCallers: { serviceAccounts: ['gateway'] } } },
      /checkCallers\/serviceAccounts\/0.*does not match/,
    ],
    [
      'ServiceAccounts that may check without TokenReview',
      { decisionService: { checkCallers: { serviceAccounts: ['data-plane:gateway'] } } },
      /checkCallers.serviceAccounts needs decisionService.tokenReview.enabled=true/,
    ],
    [
      'ServiceAccounts that may search without TokenReview',
      { decisionService: { searchCallers: { serviceAccounts: ['data-plane:indexer'] } } },
      /searchCallers.serviceAccounts needs decisionService.tokenReview.enabled=true/,
    ],
    [
      'searches on several replicas without page token keys (each replica would sign with its own)',
      { decisionService: { searchCallers: { platformRoles: ['indexer'] } } },
      /searchCallers with more than one replica needs decisionService.pageTokens.keys or existingSecret/,
    ],
    [
      'a page token key shorter than 32 characters',
      { decisionService: { pageTokens: { keys: ['short'] } } },
      /decisionService\/pageTokens\/keys\/0.*minLength/,
    ],
    [
      'TokenReview for the API server’s audiences',
      { decisionService: { tokenReview: { enabled: true, audiences: [] } } },
      /decisionService\/tokenReview\/audiences.*minItems/,
    ],
    [
      'a read-only SpiceDB killed before its preStop sleep and shutdown grace are over',
      {
        spicedb: {
          ...REQUIRED_VALUES.spicedb,
          readOnly: { ...READ_ONLY_SPICEDB, terminationGracePeriodSeconds: 10 },
        },
      },
      /spicedb.readOnly.terminationGracePeriodSeconds \(10\) must exceed preStopSleepSeconds/,
    ],
    [
      'two active controllers',
      { controller: { leaderElection: { enabled: false } } },
      /controller.replicas > 1 needs controller.leaderElection.enabled/,
    ],
  ];

  it.each(refused)('%s', async (_name, values, message) => {
    const { helm } = await packagingTools();
    await expect(
      helmTemplate(helm, { namespace: NAMESPACE, values: { ...REQUIRED_VALUES, ...values } }),
    ).rejects.toThrow(message);
  });

  it('while the required settings alone render', async () => {
    const { helm } = await packagingTools();
    const rendered = await helmTemplate(helm, { namespace: NAMESPACE, values: REQUIRED_VALUES });
    expect(parseManifests(rendered).length).toBeGreaterThan(10);
  });
});

describe('settings the services cannot start without fail the render, not the pods', () => {
  const { jwt } = REQUIRED_VALUES.auth;
  const withAuth = (auth: object) => ({ ...REQUIRED_VALUES, auth });
  const missing: [string, object, string[]][] = [
    [
      'SpiceDB',
      { auth: REQUIRED_VALUES.auth },
      [
        'spicedb.endpoint: host:port',
        'spicedb.presharedKey: SpiceDB',
        'spicedb.readOnly.datastore.existingSecret',
        'spicedb.readOnly.presharedKey',
      ],
    ],
    [
      "SpiceDB's key",
      { ...REQUIRED_VALUES, spicedb: { endpoint: 'spicedb:50051', readOnly: READ_ONLY_SPICEDB } },
      ['spicedb.presharedKey'],
    ],
    [
      'the issuer',
      withAuth({ ...REQUIRED_VALUES.auth, jwt: { audience: jwt.audience } }),
      ['auth.jwt.issuer'],
    ],
    [
      'the audience',
      withAuth({ ...REQUIRED_VALUES.auth, jwt: { issuer: jwt.issuer } }),
      ['auth.jwt.audience'],
    ],
    ['the JWKS', withAuth({ jwt }), ['auth.jwks: the keys JWTs are verified with']],
  ];

  it.each(missing)('without %s, helm template fails naming it', async (_name, values, names) => {
    const { helm } = await packagingTools();
    const failure = helmTemplate(helm, { namespace: NAMESPACE, values }).then(
      () => 'rendered',
      (error: Error) => error.message,
    );
    const message = await failure;
    expect(message).toContain('the services refuse to start without these values');
    for (const name of names) expect(message).toContain(`  - ${name}`);
    expect(message.match(/\n {2}- /g)).toHaveLength(names.length);
  });

  it('with no values at all, the message lists all seven', async () => {
    const { helm } = await packagingTools();
    await expect(helmTemplate(helm, { namespace: NAMESPACE })).rejects.toThrow(
      /spicedb.endpoint.*\n.*spicedb.presharedKey.*\n.*spicedb.readOnly.datastore.*\n.*spicedb.readOnly.presharedKey.*\n.*auth.jwt.issuer.*\n.*auth.jwt.audience.*\n.*auth.jwks/,
    );
  });

  it('the bundled SpiceDB (with its key) stands in for SpiceDB', async () => {
    const objects = await renderChart(NAMESPACE, {
      auth: REQUIRED_VALUES.auth,
      spicedb: { bundled: { enabled: true }, presharedKey: 'bundled-dev-key' },
    });
    expect(objects.some((object) => object.kind === 'Deployment')).toBe(true);
  });
});
