import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aclConfigFromEnvironment } from '../../../src/acl/acl-config.js';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: 'https://127.0.0.1:6443'}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;

let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'acl-config-'));
  await writeFile(join(dir, 'kubeconfig'), KUBECONFIG);
  env = {
    KUBECONFIG: join(dir, 'kubeconfig'),
    JWKS_URL: 'https://id.example/jwks',
    JWT_ISSUER: 'https://id.example/',
    JWT_AUDIENCE: 'acl',
    ACL_NAMESPACE: 'grants',
    DATABASE_URL: 'postgres://acl@db.example:5432/audit',
  };
});

afterAll(() => rm(dir, { recursive: true, force: true }));

describe('the ACL API configuration', () => {
  it('needs no SpiceDB setting and holds none', () => {
    const config = aclConfigFromEnvironment(env);
    expect(config).toMatchObject({ namespace: 'grants', port: 8080, basePath: '/v2' });
    expect(config).not.toHaveProperty('spicedb');
  });

  it('does not read SpiceDB settings: malformed ones are no error', () => {
    const config = aclConfigFromEnvironment({
      ...env,
      SPICEDB_ENDPOINT: 'no port',
      SPICEDB_TLS: 'maybe',
    });
    expect(JSON.stringify({ ...config, metricsRegistry: undefined })).not.toContain('no port');
  });

  it('needs DATABASE_URL: every mutation is recorded in PostgreSQL', () => {
    expect(() => aclConfigFromEnvironment({ ...env, DATABASE_URL: undefined })).toThrow(/DATABASE_URL/);
    expect(() => aclConfigFromEnvironment({ ...env, DATABASE_URL: 'mysql://x' })).toThrow(/DATABASE_URL/);
  });

  it('reads the audit settings: migration URL, migrations at start-up or not, retention', () => {
    const defaults = aclConfigFromEnvironment(env);
    expect(defaults.audit).toEqual({ databaseUrl: 'postgres://acl@db.example:5432/audit', migrate: true });
    const set = aclConfigFromEnvironment({
      ...env,
      DATABASE_MIGRATION_URL: 'postgresql://owner@db.example/audit',
      AUDIT_MIGRATIONS: 'skip',
      AUDIT_RETENTION_DAYS: '400',
    });
    expect(set.audit).toEqual({
      databaseUrl: 'postgres://acl@db.example:5432/audit',
      migrationUrl: 'postgresql://owner@db.example/audit',
      migrate: false,
      retentionDays: 400,
    });
    expect(() => aclConfigFromEnvironment({ ...env, AUDIT_RETENTION_DAYS: '0' })).toThrow(
      /AUDIT_RETENTION_DAYS/,
    );
  });

  it('records 30 refusals a minute per actor by default, as AUDIT_REFUSAL_LIMIT sets, or every one when off', () => {
    expect(aclConfigFromEnvironment(env).refusalLimit).toEqual({ requests: 30, windowMs: 60_000 });
    const set = aclConfigFromEnvironment({ ...env, AUDIT_REFUSAL_LIMIT: '5/10s' });
    expect(set.refusalLimit).toEqual({ requests: 5, windowMs: 10_000 });
    expect(aclConfigFromEnvironment({ ...env, AUDIT_REFUSAL_LIMIT: 'off' })).not.toHaveProperty(
      'refusalLimit',
    );
    expect(() => aclConfigFromEnvironment({ ...env, AUDIT_REFUSAL_LIMIT: 'many' })).toThrow(
      /AUDIT_REFUSAL_LIMIT/,
    );
  });

  it('finds the decision replicas from a fixed list or the decision Service, one of the two, or asks none', () => {
    expect(aclConfigFromEnvironment(env)).not.toHaveProperty('decisionReplicas');
    const listed = aclConfigFromEnvironment({
      ...env,
      DECISION_REPLICAS: 'http://127.0.0.1:8081, http://127.0.0.1:8082',
    });
    expect(listed.decisionReplicas).toEqual({
      kind: 'static',
      urls: ['http://127.0.0.1:8081', 'http://127.0.0.1:8082'],
    });
    const service = aclConfigFromEnvironment({ ...env, DECISION_SERVICE: 'pgo-decision-service' });
    expect(service.decisionReplicas).toEqual({
      kind: 'service',
      name: 'pgo-decision-service',
      portName: 'http',
    });
    expect(() =>
      aclConfigFromEnvironment({ ...env, DECISION_REPLICAS: 'http://a:1', DECISION_SERVICE: 'decision' }),
    ).toThrow(/DECISION_REPLICAS or DECISION_SERVICE/);
    expect(() => aclConfigFromEnvironment({ ...env, DECISION_REPLICAS: 'ftp://a:1' })).toThrow(
      /DECISION_REPLICAS/,
    );
    expect(() => aclConfigFromEnvironment({ ...env, DECISION_SERVICE: 'Not_A_Name' })).toThrow(
      /DECISION_SERVICE/,
    );
  });
});
