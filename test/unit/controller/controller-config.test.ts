import { describe, expect, it } from 'vitest';
import { ConfigurationError, parseDuration } from '../../../src/config/environment.js';
import { controllerConfigFromEnvironment } from '../../../src/controller/controller-config.js';

const required = { SPICEDB_ENDPOINT: 'spicedb:50051', SPICEDB_TOKEN: 'key' };

describe('controllerConfigFromEnvironment', () => {
  it('needs only SpiceDB; everything else has a default', () => {
    expect(controllerConfigFromEnvironment(required)).toEqual({
      spicedb: { endpoint: 'spicedb:50051', token: 'key', transport: 'tls', probePeriodMs: 5_000 },
      aclNamespace: 'policy-grant-system',
      http: { host: '0.0.0.0', port: 8082 },
      resyncPeriodMs: 600_000,
      leaderElection: {
        enabled: true,
        namespace: 'policy-grant-system',
        name: 'policy-grant-controller',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        exitOnLoss: true,
      },
      maxConcurrentReconciles: 16,
      accessRequestPendingTtlMs: 7 * 24 * 3_600_000,
      garbageCollectionRetentionMs: 30 * 24 * 3_600_000,
      logLevel: 'info',
      errorNamespace: 'dx',
      auditActors: { from: 'field-manager' },
    });
  });

  it('reads every variable', () => {
    const config = controllerConfigFromEnvironment({
      ...required,
      KUBECONFIG: '/etc/kube/config',
      SPICEDB_TLS: 'plaintext',
      ACL_NAMESPACE: 'acl',
      CONTROLLER_PORT: '9000',
      CONTROLLER_HOST: '127.0.0.1',
      RESYNC_PERIOD: '1h30m',
      LEADER_ELECTION: 'false',
      LEADER_ELECTION_NAMESPACE: 'kube-system',
      LEADER_ELECTION_ID: 'pgc',
      LEASE_DURATION: '30s',
      RENEW_DEADLINE: '20s',
      RETRY_PERIOD: '4s',
      EXIT_ON_LOST_LEADERSHIP: 'false',
      WATCH_LABEL_SELECTOR: 'shard=a',
      MAX_CONCURRENT_RECONCILES: '8',
      ACCESS_REQUEST_PENDING_TTL: '72h',
      GARBAGE_COLLECTION_RETENTION: '24h',
      LOG_LEVEL: 'debug',
      SPICEDB_PROBE_PERIOD: '500ms',
      ERROR_NAMESPACE: 'acme',
      DATABASE_URL: 'postgres://controller:secret@db:5432/audit',
      AUDIT_ACTOR_FROM: 'admission',
      ACL_API_KUBERNETES_USER: 'system:serviceaccount:acl:acl-api',
    });
    expect(config).toEqual({
      kubeconfigPath: '/etc/kube/config',
      spicedb: { endpoint: 'spicedb:50051', token: 'key', transport: 'plaintext', probePeriodMs: 500 },
      aclNamespace: 'acl',
      http: { host: '127.0.0.1', port: 9000 },
      resyncPeriodMs: 5_400_000,
      leaderElection: {
        enabled: false,
        namespace: 'kube-system',
        name: 'pgc',
        leaseDurationMs: 30_000,
        renewDeadlineMs: 20_000,
        retryPeriodMs: 4_000,
        exitOnLoss: false,
      },
      labelSelector: 'shard=a',
      maxConcurrentReconciles: 8,
      accessRequestPendingTtlMs: 72 * 3_600_000,
      garbageCollectionRetentionMs: 24 * 3_600_000,
      logLevel: 'debug',
      errorNamespace: 'acme',
      auditDatabaseUrl: 'postgres://controller:secret@db:5432/audit',
      auditActors: { from: 'admission', aclApiUser: 'system:serviceaccount:acl:acl-api' },
    });
  });

  it('trusts a CA file over TLS', () => {
    expect(
      controllerConfigFromEnvironment({ ...required, SPICEDB_CA_FILE: '/ca.pem' }).spicedb.transport,
    ).toEqual({
      caFile: '/ca.pem',
    });
    expect(() =>
      controllerConfigFromEnvironment({ ...required, SPICEDB_CA_FILE: '/ca.pem', SPICEDB_TLS: 'plaintext' }),
    ).toThrow(/SPICEDB_CA_FILE: a CA file needs SPICEDB_TLS=tls/);
  });

  it('treats empty variables as unset', () => {
    expect(
      controllerConfigFromEnvironment({ ...required, KUBECONFIG: '', RESYNC_PERIOD: '' }).resyncPeriodMs,
    ).toBe(600_000);
  });

  it('fails naming every wrong variable', () => {
    const attempt = () =>
      controllerConfigFromEnvironment({
        SPICEDB_ENDPOINT: 'no-port',
        SPICEDB_TLS: 'maybe',
        RESYNC_PERIOD: 'often',
        LEADER_ELECTION: 'perhaps',
        CONTROLLER_PORT: '70000',
        ACL_NAMESPACE: 'Not_A_Name',
        DATABASE_URL: 'mysql://db',
      });
    expect(attempt).toThrow(ConfigurationError);
    const message = (() => {
      try {
        attempt();
      } catch (error) {
        return (error as Error).message;
      }
    })();
    for (const name of [
      'SPICEDB_ENDPOINT',
      'SPICEDB_TOKEN',
      'SPICEDB_TLS',
      'RESYNC_PERIOD',
      'LEADER_ELECTION',
      'CONTROLLER_PORT',
      'ACL_NAMESPACE',
      'DATABASE_URL',
    ]) {
      expect(message).toContain(`${name}: `);
    }
  });

  it('refuses a resync period under a second, and inconsistent leader-election timings', () => {
    expect(() => controllerConfigFromEnvironment({ ...required, RESYNC_PERIOD: '500ms' })).toThrow(
      /RESYNC_PERIOD: must be at least 1000 ms/,
    );
    expect(() =>
      controllerConfigFromEnvironment({ ...required, LEASE_DURATION: '10s', RENEW_DEADLINE: '10s' }),
    ).toThrow(/LEASE_DURATION > RENEW_DEADLINE/);
    expect(() => controllerConfigFromEnvironment({ ...required, LEASE_DURATION: '10500ms' })).toThrow(
      /whole seconds/,
    );
  });
  it('turns garbage collection off with GARBAGE_COLLECTION=false', () => {
    expect(controllerConfigFromEnvironment({ ...required, GARBAGE_COLLECTION: 'false' })).not.toHaveProperty(
      'garbageCollectionRetentionMs',
    );
  });
});

describe('parseDuration', () => {
  it("reads Go's notation", () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('1.5m')).toBe(90_000);
    expect(parseDuration('2h45m10s')).toBe(9_910_000);
  });

  it('refuses anything else', () => {
    for (const text of ['', '10', '5 m', '1d', '-5s', 'm'])
      expect(() => parseDuration(text), text).toThrow(/not a duration/);
  });
});
