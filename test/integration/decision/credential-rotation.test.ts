import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { createAuthenticators } from '../../../src/auth/authenticators.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { startDecisionService } from '../../../src/decision/decision-service.js';
import type { RunningDecisionService } from '../../../src/decision/decision-service.js';
import { createLogger } from '../../../src/observability/logger.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { writeKubeletVolume } from '../../support/kubelet-volume.js';
import { metricValue } from '../../../src/observability/metric-text.js';
import { until } from '../../../dev/wait/until.js';
import { FAST } from '../../unit/auth/support/fast-scrypt.js';
import { AUDIENCE, ISSUER, jwksOf, signToken, testKey } from '../../unit/auth/support/tokens.js';
import type { TestKey } from '../../unit/auth/support/tokens.js';
import { testSpiceDB } from '../support/cluster.js';
import { unknownUserCheck, untilReady } from './support/decision-service.js';

// Credentials rotated the way Kubernetes updates a mounted Secret or ConfigMap (a new version of the volume
// behind an atomically swapped `..data` link), against a running decision service: no restart.

const RELOAD_INTERVAL_MS = 200;
const JWKS_KEY = 'jwks.json';

let stateDir: string;
let basicDir: string;
let jwksDir: string;
let service: RunningDecisionService;
const metricsRegistry = createMetricsRegistry();
const stopWatching = new AbortController();
const [oldKey, newKey] = [testKey('ES256', 'old-signing-key'), testKey('ES256', 'new-signing-key')];

const basicSecret = async (secrets: Record<string, string>) =>
  Object.fromEntries(
    await Promise.all(
      Object.entries(secrets).map(async ([clientId, secret]) => [
        clientId,
        JSON.stringify({ hash: await hashSecret(secret, FAST), roles: [DECISION_CLIENT_ROLE] }),
      ]),
    ),
  );

const jwksVolume = (...keys: TestKey[]) =>
  writeKubeletVolume(jwksDir, { [JWKS_KEY]: JSON.stringify(jwksOf(...keys)) });

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'credential-rotation-'));
  [basicDir, jwksDir] = [join(stateDir, 'basic-credentials'), join(stateDir, 'jwks')];
  await writeKubeletVolume(
    basicDir,
    await basicSecret({ gateway: 'gateway-secret', revoked: 'revoked-secret' }),
  );
  await jwksVolume(await oldKey);
  const authenticators = await createAuthenticators(
    {
      jwks: { file: join(jwksDir, JWKS_KEY) },
      basicCredentialsDir: basicDir,
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ['ES256'],
      reloadIntervalMs: RELOAD_INTERVAL_MS,
    },
    { metricsRegistry, signal: stopWatching.signal, logger: createLogger({ level: 'silent' }) },
  );
  service = await startDecisionService(
    { port: 0, host: '127.0.0.1', spicedb: { ...testSpiceDB(), transport: 'plaintext' } },
    { authenticators, metricsRegistry, logger: createLogger({ level: 'silent' }) },
  );
  await untilReady(service);
});

afterAll(async () => {
  stopWatching.abort();
  await service?.stop();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** The status of a check with this Authorization: 200 when the caller is accepted, 401 when not. */
async function checkStatus(authorization: string): Promise<number> {
  const response = await fetch(`${service.url}/v1/check`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(unknownUserCheck('rotation')),
  });
  await response.body?.cancel();
  return response.status;
}

const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`;
const bearer = async (key: Promise<TestKey>) =>
  `Bearer ${await signToken(await key, { roles: [DECISION_CLIENT_ROLE] }, { expiresIn: 3_600 })}`;
const untilStatus = (authorization: string, status: number, what: string) =>
  until(async () => (await checkStatus(authorization)) === status, what);
const reloadFailures = async (source: string) =>
  metricValue(
    await metricsRegistry.metrics(),
    `policygrant_credentials_reload_failures_total{source="${source}"}`,
  );

describe('Basic credentials from a mounted Secret', () => {
  it('refuses a client once the Secret no longer holds it, and accepts a new one, without a restart', async () => {
    const revoked = basic('revoked', 'revoked-secret');
    await writeKubeletVolume(
      basicDir,
      await basicSecret({ gateway: 'gateway-secret', revoked: 'revoked-secret' }),
    );
    await untilStatus(revoked, 200, 'the client to be accepted');

    await writeKubeletVolume(
      basicDir,
      await basicSecret({ gateway: 'gateway-secret', added: 'added-secret' }),
    );
    await untilStatus(revoked, 401, 'the revoked client to be refused');
    await untilStatus(basic('added', 'added-secret'), 200, 'the new client to be accepted');
    expect(await checkStatus(basic('gateway', 'gateway-secret'))).toBe(200);
  });

  it('keeps the credentials in use when the new Secret is invalid, and counts the refusal', async () => {
    const failuresBefore = await reloadFailures('basic-credentials');
    const gateway = basic('gateway', 'gateway-secret');
    await writeKubeletVolume(basicDir, await basicSecret({ gateway: 'gateway-secret' }));
    await untilStatus(gateway, 200, 'the client to be accepted');
    await writeKubeletVolume(basicDir, { gateway: 'not-a-hash' });
    await until(
      async () => (await reloadFailures('basic-credentials')) > failuresBefore,
      'the refused reload',
    );
    expect(await checkStatus(gateway)).toBe(200);
    expect(
      await metricValue(
        await metricsRegistry.metrics(),
        'policygrant_credentials_stale{source="basic-credentials"}',
      ),
    ).toBe(1);
  });
});

describe('a JWKS file from a mounted ConfigMap', () => {
  it('accepts a new signing key once added, and refuses the old one once removed', async () => {
    const [signedByOld, signedByNew] = await Promise.all([bearer(oldKey), bearer(newKey)]);
    await jwksVolume(await oldKey);
    await untilStatus(signedByOld, 200, 'the old signing key to be accepted');
    expect(await checkStatus(signedByNew)).toBe(401);

    await jwksVolume(await oldKey, await newKey);
    await untilStatus(signedByNew, 200, 'the new signing key to be accepted');
    expect(await checkStatus(signedByOld)).toBe(200);

    await jwksVolume(await newKey);
    await untilStatus(signedByOld, 401, 'the removed signing key to be refused');
    expect(await checkStatus(signedByNew)).toBe(200);
  });

  it('keeps the keys in use when the new JWKS is broken', async () => {
    const failuresBefore = await reloadFailures('jwks');
    const signedByNew = await bearer(newKey);
    await jwksVolume(await newKey);
    await untilStatus(signedByNew, 200, 'the signing key to be accepted');
    await writeKubeletVolume(jwksDir, { [JWKS_KEY]: '{"keys": [' });
    await until(async () => (await reloadFailures('jwks')) > failuresBefore, 'the refused reload');
    expect(await checkStatus(signedByNew)).toBe(200);
  });
});
