import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticators } from '../../../src/auth/authenticators.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { FAST } from './support/fast-scrypt.js';
import {
  AUDIENCE,
  ISSUER,
  jwksOf,
  ORG_ID,
  signToken,
  testKey,
  USER_ID,
  type TestKey,
} from './support/tokens.js';

let directory: string;
let key: TestKey;
let jwksFile: string;
let stopReloads: AbortController;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'authenticators-'));
  key = await testKey('ES256', 'k1');
  jwksFile = join(directory, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(jwksOf(key)));
  await mkdir(join(directory, 'basic'));
  await writeFile(
    join(directory, 'basic', 'gateway'),
    JSON.stringify({ hash: await hashSecret('gateway-secret', FAST), roles: ['decision_client'] }),
  );
});

afterEach(() => stopReloads.abort());

afterAll(() => rm(directory, { recursive: true, force: true }));

function parts() {
  stopReloads = new AbortController();
  return { signal: stopReloads.signal };
}

describe('createAuthenticators', () => {
  it('verifies tokens signed with a key of the JWKS file, reading the claims the settings name', async () => {
    const { bearer, basic } = await createAuthenticators(
      {
        jwks: { file: jwksFile },
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['ES256'],
        claimNames: { roles: 'groups', organisation: 'tenant' },
      },
      parts(),
    );
    expect(basic).toBeUndefined();
    const token = await signToken(key, { groups: ['auditor'], tenant: ORG_ID });
    const principal = await bearer?.verify(token);
    expect(principal).toMatchObject({ id: USER_ID, organisationId: ORG_ID });
    expect([...(principal?.roles ?? [])]).toEqual(['auditor']);
    await expect(bearer?.verify(await signToken(key, {}, { audience: 'another' }))).rejects.toThrow();
  });

  it('refuses a token older than the longest age the settings allow', async () => {
    const { bearer } = await createAuthenticators(
      { jwks: { file: jwksFile }, issuer: ISSUER, audience: AUDIENCE, maxTokenAgeMs: 60_000 },
      parts(),
    );
    const old = await signToken(key, {}, { issuedAgo: 120 });
    await expect(bearer?.verify(old)).rejects.toThrow();
    await expect(bearer?.verify(await signToken(key, {}, { issuedAgo: 10 }))).resolves.toBeDefined();
  });

  it('verifies Basic application credentials of the mounted folder, counted in the registry it is given', async () => {
    const metricsRegistry = createMetricsRegistry();
    const { basic } = await createAuthenticators(
      {
        jwks: { file: jwksFile },
        issuer: ISSUER,
        audience: AUDIENCE,
        basicCredentialsDir: join(directory, 'basic'),
        scrypt: { concurrency: 1, queue: 1 },
      },
      { ...parts(), metricsRegistry },
    );
    const principal = await basic?.verify('gateway', 'gateway-secret');
    expect([...(principal?.roles ?? [])]).toEqual(['decision_client']);
    await expect(basic?.verify('gateway', 'wrong')).rejects.toThrow();
    expect(await metricsRegistry.metrics()).toContain('policygrant_basic_auth_verifications_total');
  });

  it('fails the start when the JWKS file does not hold keys', async () => {
    const broken = join(directory, 'broken.json');
    await writeFile(broken, '{"keys": "none"}');
    await expect(
      createAuthenticators({ jwks: { file: broken }, issuer: ISSUER, audience: AUDIENCE }, parts()),
    ).rejects.toThrow();
  });

  it('takes a JWKS URL without fetching it before the first token', async () => {
    const { bearer } = await createAuthenticators(
      { jwks: { url: 'https://127.0.0.1:9/jwks' }, issuer: ISSUER, audience: AUDIENCE },
      parts(),
    );
    expect(bearer?.keysVersion).toBeUndefined();
  });
});
