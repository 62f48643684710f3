import type * as NodeCrypto from 'node:crypto';
import express from 'express';
import { describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../../src/auth/principal.js';
import { cachedBearerVerifier } from '../../../src/auth/verified-token-cache.js';
import { authenticate } from '../../../src/http/auth-middleware.js';
import { errorHandler } from '../../../src/http/error-handler.js';
import { limitFailedAuthentication } from '../../../src/http/rate-limit/failed-authentication-limit.js';
import { rateLimitedRequests } from '../../../src/http/rate-limit/rate-limit-metrics.js';
import { createUrnScheme } from '../../../src/http/urn.js';
import { createMetricsRegistry } from '../../../src/observability/metrics.js';
import { capturedLogger, serve } from './support/serve.js';

/** Every SHA-256 the code under test computes with node:crypto's one-shot hash. */
const hashed = vi.hoisted(() => ({ inputs: [] as string[] }));

vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof NodeCrypto>();
  const hash = ((algorithm: string, data: string, encoding: 'base64url') => {
    hashed.inputs.push(data);
    return crypto.hash(algorithm, data, encoding);
  }) as typeof crypto.hash;
  return { ...crypto, default: { ...crypto, hash }, hash };
});

const urn = createUrnScheme('decision');
const principal: Principal = { kind: 'user', id: 'u', roles: new Set(['decision_client']) };

/** The failed-authentication limit around authentication through a verified-token cache, as the services run them. */
async function start() {
  const verified: string[] = [];
  const bearer = cachedBearerVerifier({
    verify: async (token) => {
      verified.push(token);
      return principal;
    },
  });
  const app = express();
  const { logger } = capturedLogger();
  app.use((req, _res, next) => {
    req.log = logger;
    next();
  });
  const limit = { requests: 3, windowMs: 60_000 };
  app.get(
    '/',
    limitFailedAuthentication(authenticate({ bearer }), {
      urn,
      limit,
      limited: rateLimitedRequests(createMetricsRegistry()),
    }),
    (_req, res) => {
      res.status(204).end();
    },
  );
  app.use(errorHandler(urn));
  return { base: await serve(app), verified };
}

describe('a presented bearer token', () => {
  it('is hashed once per request by the failed-authentication limit and the verified-token cache together', async () => {
    const { base, verified } = await start();
    const headers = { authorization: 'Bearer some.token.value' };
    hashed.inputs.length = 0;
    for (let request = 0; request < 3; request++) {
      expect((await fetch(base, { headers })).status).toBe(204);
    }
    expect(verified).toEqual(['some.token.value']);
    expect(hashed.inputs).toEqual(['some.token.value', 'some.token.value', 'some.token.value']);
  });
});
