import { hash } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AuthenticationError } from '../auth/authentication-error.js';
import { hasRole } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import type { Authenticators } from '../auth/verifiers.js';
import { VerifierBusyError, VerifierUnavailableError } from '../auth/verifier-unavailable.js';
import { clientAddress } from './client-address.js';
import { busy, dependencyUnavailable, HttpError } from './errors.js';
import type { ApiAuthentication, OpenApiSecurityScheme } from './openapi/route-definition.js';

declare module 'express-serve-static-core' {
  interface Request {
    /** Set by authenticate(). */
    principal?: Principal;
  }
}

export const DEFAULT_REALM = 'policy-grant-operator';

type Credentials =
  { scheme: 'bearer'; token: string } | { scheme: 'basic'; clientId: string; secret: string };

const B64_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Accepts `Authorization: Bearer <token>` or `Basic <base64(clientId:secret)>` and sets `req.principal`.
 * Anything else is a 401 with challenges for the configured schemes and a short reason; the exact failure
 * is logged, not returned.
 */
export function authenticate(authenticators: Authenticators): RequestHandler {
  if (!authenticators.bearer && !authenticators.basic)
    throw new Error('authenticate() needs a bearer or basic verifier');
  return async (req, _res, next) => {
    try {
      const credentials = parseAuthorization(req.get('authorization'));
      req.principal = await verifyCredentials(credentials, authenticators, clientAddress(req));
      next();
    } catch (error) {
      if (!(error instanceof AuthenticationError)) throw verifierOutage(error);
      const cause = error.cause instanceof Error ? error.cause.message : undefined;
      req.log.info({ reason: error.reason, cause }, 'authentication failed');
      next(
        new HttpError('Unauthorized', error.reason, {
          headers: { 'www-authenticate': challenges(authenticators, error.reason) },
        }),
      );
    }
  };
}

/** A verifier that could not decide, as the 503 naming what it waited for; any other error unchanged. */
function verifierOutage(error: unknown): unknown {
  if (error instanceof VerifierBusyError) return busy(error.what);
  if (error instanceof VerifierUnavailableError) return dependencyUnavailable(error.dependency, error.cause);
  return error;
}

/** 403 unless the authenticated caller holds one of `roles`. */
export function requireAnyRole(roles: readonly string[]): RequestHandler {
  return (req, _res, next) => {
    const { principal } = req;
    if (!principal) next(new HttpError('Unauthorized', 'missing credentials'));
    else if (!roles.some((role) => hasRole(principal, role)))
      next(new HttpError('Forbidden', `requires role ${roles.join(' or ')}`));
    else next();
  };
}

/** The middleware together with the security schemes the OpenAPI document declares for it. */
export function apiAuthentication(authenticators: Authenticators): ApiAuthentication {
  const schemes: Record<string, OpenApiSecurityScheme> = {};
  if (authenticators.bearer) schemes.bearerAuth = { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' };
  if (authenticators.basic) schemes.basicAuth = { type: 'http', scheme: 'basic' };
  return { middleware: authenticate(authenticators), schemes };
}

/** The SHA-256 of an Authorization header (base64url): how a credential is known without being kept. */
export function headerDigest(header: string): string {
  return hash('sha256', header, 'base64url');
}

/**
 * Whom an Authorization header claims to be, before anything is verified: `basic:<client id>` for a Basic
 * application, otherwise `token:<headerDigest>` (a bearer token names no identity that is cheaper to forge
 * than the token itself). Failed authentications are counted per claimed identity with it. `digest` is the
 * header's headerDigest when the caller has it already.
 */
export function claimedIdentity(header: string, digest?: string): string {
  try {
    const credentials = parseAuthorization(header);
    if (credentials.scheme === 'basic') return `basic:${credentials.clientId}`;
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
  }
  return `token:${digest ?? headerDigest(header)}`;
}

function parseAuthorization(header: string | undefined): Credentials {
  const [scheme = '', value = ''] = (header ?? '').trim().split(/\s+/, 2);
  if (scheme === '') throw new AuthenticationError('missing credentials');
  switch (scheme.toLowerCase()) {
    case 'bearer':
      if (!B64_TOKEN.test(value)) throw new AuthenticationError('invalid token');
      return { scheme: 'bearer', token: value };
    case 'basic': {
      const decoded = BASE64.test(value) ? Buffer.from(value, 'base64').toString('utf8') : '';
      const separator = decoded.indexOf(':');
      if (separator < 1) throw new AuthenticationError('invalid credentials');
      return { scheme: 'basic', clientId: decoded.slice(0, separator), secret: decoded.slice(separator + 1) };
    }
    default:
      throw new AuthenticationError('unsupported authorization scheme');
  }
}

function verifyCredentials(
  credentials: Credentials,
  authenticators: Authenticators,
  address: string,
): Promise<Principal> {
  if (credentials.scheme === 'bearer' && authenticators.bearer)
    return authenticators.bearer.verify(credentials.token);
  if (credentials.scheme === 'basic' && authenticators.basic) {
    return authenticators.basic.verify(credentials.clientId, credentials.secret, address);
  }
  throw new AuthenticationError('unsupported authorization scheme');
}

/** RFC 6750/7617 challenges; error details only once credentials were presented. */
function challenges(authenticators: Authenticators, reason: string): string[] {
  const realm = `realm="${authenticators.realm ?? DEFAULT_REALM}"`;
  const presented = reason !== 'missing credentials';
  return [
    ...(authenticators.bearer
      ? [`Bearer ${realm}${presented ? `, error="invalid_token", error_description="${reason}"` : ''}`]
      : []),
    ...(authenticators.basic ? [`Basic ${realm}, charset="UTF-8"`] : []),
  ];
}
