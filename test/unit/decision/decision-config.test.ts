import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../src/config/environment.js';
import { decisionConfigFromEnvironment } from '../../../src/decision/decision-config.js';
import { jwksOf, testKey } from '../auth/support/tokens.js';

let directory: string;
let minimal: NodeJS.ProcessEnv;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'decision-config-'));
  const jwksFile = join(directory, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(jwksOf(await testKey('ES256', 'k'))));
  minimal = {
    SPICEDB_ENDPOINT: 'spicedb:50051',
    SPICEDB_TOKEN: 'key',
    JWKS_FILE: jwksFile,
    JWT_ISSUER: 'https://idp.example',
    JWT_AUDIENCE: 'policy-grant-operator',
  };
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('decisionConfigFromEnvironment', () => {
  it('applies the documented defaults', () => {
    const config = decisionConfigFromEnvironment(minimal);
    expect(config).toMatchObject({
      port: 8081,
      checkTimeoutMs: 2_000,
      errorNamespace: 'dx',
      spicedb: { endpoint: 'spicedb:50051', token: 'key', transport: 'tls' },
    });
    expect(config.auth.jwks).toEqual({ file: minimal.JWKS_FILE });
    expect(config.auth.basicCredentialsDir).toBeUndefined();
    expect(config.tokenReview).toBeUndefined();
    expect(config.checkCallers).toEqual({ roles: ['decision_client'], serviceAccounts: [] });
    // Nobody searches, and page tokens are signed with a key of the process's own.
    expect(config.searchCallers).toEqual({ roles: [], platformRoles: [], platformServiceAccounts: [] });
    expect(config.pageTokenKeys).toEqual([]);
    // SpiceDB's default quantization interval, plus the margin.
    expect(config.revisionBarrier).toEqual({
      quantizationMs: 5_000,
      marginMs: 2_000,
      maxEntries: 100_000,
      livenessMs: 1_000,
    });
    expect(config.decisionCache).toEqual({
      enabled: true,
      maxEntries: 10_000,
      allowTtlMs: 60_000,
      denyTtlMs: 1_000,
    });
    expect(config.checkBatch).toEqual({ enabled: true, maxItems: 100, concurrency: 4 });
  });

  it('reads the check batching’s switch, size and calls in flight', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      CHECK_BATCHING: 'false',
      CHECK_BATCH_MAX: '25',
      CHECK_BATCH_CONCURRENCY: '8',
    });
    expect(config.checkBatch).toEqual({ enabled: false, maxItems: 25, concurrency: 8 });
  });

  it('reads the decision cache’s switch, bound and lifetimes', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      DECISION_CACHE: 'false',
      DECISION_CACHE_MAX_ENTRIES: '500',
      DECISION_CACHE_ALLOW_TTL: '2s',
      DECISION_CACHE_DENY_TTL: '250ms',
    });
    expect(config.decisionCache).toEqual({
      enabled: false,
      maxEntries: 500,
      allowTtlMs: 2_000,
      denyTtlMs: 250,
    });
  });

  it('reads the revision barrier’s window, margin and bound', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      SPICEDB_QUANTIZATION_INTERVAL: '1s',
      REVISION_BARRIER_MARGIN: '500ms',
      REVISION_BARRIER_MAX_ENTRIES: '2000',
      REVISION_BARRIER_LIVENESS: '3s',
    });
    expect(config.revisionBarrier).toEqual({
      quantizationMs: 1_000,
      marginMs: 500,
      maxEntries: 2_000,
      livenessMs: 3_000,
    });
  });

  it('reads port, deadline, namespace and the TokenReview switch', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      DECISION_PORT: '9000',
      CHECK_TIMEOUT: '500ms',
      ERROR_NAMESPACE: 'acme',
      SPICEDB_TLS: 'plaintext',
      TOKEN_REVIEW: 'true',
      TOKEN_REVIEW_AUDIENCES: 'policy-grant-decision, other',
    });
    expect(config).toMatchObject({
      port: 9000,
      checkTimeoutMs: 500,
      errorNamespace: 'acme',
      spicedb: { transport: 'plaintext' },
      tokenReview: {
        jwtIssuers: ['https://idp.example'],
        audiences: ['policy-grant-decision', 'other'],
        issuers: ['https://kubernetes.default.svc.cluster.local'],
        bound: { concurrency: 4, queue: 64 },
      },
    });
  });

  it('reviews tokens through the cluster KUBECONFIG names, or the in-cluster ServiceAccount when it is unset', () => {
    expect(decisionConfigFromEnvironment({ ...minimal, TOKEN_REVIEW: 'true' })).not.toHaveProperty(
      'kubeconfigPath',
    );
    const config = decisionConfigFromEnvironment({ ...minimal, KUBECONFIG: '/etc/kube/config' });
    expect(config.kubeconfigPath).toBe('/etc/kube/config');
  });

  it('reviews ServiceAccount tokens for the service’s own audience unless told another', () => {
    const config = decisionConfigFromEnvironment({ ...minimal, TOKEN_REVIEW: 'true' });
    expect(config.tokenReview?.audiences).toEqual(['policy-grant-decision']);
  });

  it('reads who may check: roles and ServiceAccounts', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      TOKEN_REVIEW: 'true',
      DECISION_CLIENT_ROLES: 'gateway, decision_client',
      DECISION_CLIENT_SERVICE_ACCOUNTS: 'data-plane:gateway,apps:file-server.v2',
    });
    expect(config.checkCallers).toEqual({
      roles: ['gateway', 'decision_client'],
      serviceAccounts: ['data-plane:gateway', 'apps:file-server.v2'],
    });
  });

  it('reads who may search, and the page token keys in order', () => {
    const [newKey, oldKey] = ['n'.repeat(32), 'o'.repeat(40)];
    const config = decisionConfigFromEnvironment({
      ...minimal,
      TOKEN_REVIEW: 'true',
      DECISION_SEARCH_ROLES: 'search_client',
      DECISION_SEARCH_PLATFORM_ROLES: 'platform_search_client',
      DECISION_SEARCH_SERVICE_ACCOUNTS: 'data-plane:indexer',
      PAGE_TOKEN_KEYS: `${newKey},${oldKey}`,
    });
    expect(config.searchCallers).toEqual({
      roles: ['search_client'],
      platformRoles: ['platform_search_client'],
      platformServiceAccounts: ['data-plane:indexer'],
    });
    expect(config.pageTokenKeys?.map((key) => Buffer.from(key).toString())).toEqual([newKey, oldKey]);
  });

  it.each([
    ['a page token key shorter than 32 characters', { PAGE_TOKEN_KEYS: 'short' }, 'PAGE_TOKEN_KEYS'],
    [
      'search ServiceAccounts without TokenReview',
      { DECISION_SEARCH_SERVICE_ACCOUNTS: 'apps:indexer' },
      'DECISION_SEARCH_SERVICE_ACCOUNTS',
    ],
  ])('refuses %s', (_case, env, variable) => {
    expect(() => decisionConfigFromEnvironment({ ...minimal, ...env })).toThrow(
      new RegExp(`^invalid configuration: ${variable}`),
    );
  });

  it.each([
    ['a name without its namespace', { TOKEN_REVIEW: 'true', DECISION_CLIENT_SERVICE_ACCOUNTS: 'gateway' }],
    ['an upper-case name', { TOKEN_REVIEW: 'true', DECISION_CLIENT_SERVICE_ACCOUNTS: 'apps:Gateway' }],
    [
      'a username, not namespace:name',
      { TOKEN_REVIEW: 'true', DECISION_CLIENT_SERVICE_ACCOUNTS: 'system:serviceaccount:apps:gw' },
    ],
    ['ServiceAccounts without TokenReview', { DECISION_CLIENT_SERVICE_ACCOUNTS: 'apps:gateway' }],
  ])('refuses DECISION_CLIENT_SERVICE_ACCOUNTS with %s', (_case, env) => {
    expect(() => decisionConfigFromEnvironment({ ...minimal, ...env })).toThrow(
      /^invalid configuration: DECISION_CLIENT_SERVICE_ACCOUNTS/,
    );
  });

  it('reads the limits, the ServiceAccount issuers, the TokenReview bound and the trusted proxies', () => {
    const config = decisionConfigFromEnvironment({
      ...minimal,
      TOKEN_REVIEW: 'true',
      TOKEN_REVIEW_ISSUERS: 'https://oidc.eks.example/id/1, https://kubernetes.default.svc',
      TOKEN_REVIEW_CONCURRENCY: '2',
      TOKEN_REVIEW_QUEUE: '8',
      RATE_LIMIT_CHECK: '100/1s',
      AUTH_FAILURE_LIMIT: 'off',
      TRUST_PROXY: '10.0.0.0/8, 192.168.1.1',
    });
    expect(config).toMatchObject({
      tokenReview: {
        issuers: ['https://oidc.eks.example/id/1', 'https://kubernetes.default.svc'],
        bound: { concurrency: 2, queue: 8 },
      },
      limits: { perSubject: { check: { requests: 100, windowMs: 1_000 } } },
      trustProxy: ['10.0.0.0/8', '192.168.1.1'],
    });
    expect(config.limits?.failedAuthentication).toBeUndefined();
  });

  it('refuses a hop count in TRUST_PROXY, naming the variable', () => {
    expect(() => decisionConfigFromEnvironment({ ...minimal, TRUST_PROXY: '1' })).toThrow(
      /^invalid configuration: TRUST_PROXY: a hop count \(1\)/,
    );
  });

  it('names the variable that is wrong', () => {
    const wrong: Array<[string, string]> = [
      ['CHECK_TIMEOUT', '2 seconds'],
      ['TOKEN_REVIEW', 'yes'],
      ['DECISION_PORT', '70000'],
      ['SPICEDB_QUANTIZATION_INTERVAL', '5'],
      ['REVISION_BARRIER_MAX_ENTRIES', '0'],
      ['DECISION_CACHE', 'on'],
      ['DECISION_CACHE_MAX_ENTRIES', '0'],
      ['DECISION_CACHE_DENY_TTL', '1'],
      ['CHECK_BATCHING', 'sometimes'],
      ['CHECK_BATCH_MAX', '0'],
      ['CHECK_BATCH_CONCURRENCY', '1.5'],
      ['DECISION_CLIENT_ROLES', ' , '],
      ['TOKEN_REVIEW_AUDIENCES', ','],
      // An AuthZEN identifier has no query or fragment; its path names the route of the metadata.
      ['DECISION_PUBLIC_URL', 'https://gateway.example/decision?tenant=1'],
      ['DECISION_PUBLIC_URL', 'https://gateway.example/decision#top'],
      ['DECISION_PUBLIC_URL', 'https://gateway.example/:tenant'],
    ];
    for (const [name, value] of wrong) {
      const failure = () => decisionConfigFromEnvironment({ ...minimal, [name]: value });
      expect(failure).toThrow(ConfigurationError);
      expect(failure).toThrow(name);
    }
  });
});
