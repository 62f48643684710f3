import { hash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { AuthenticationError } from '../auth/authentication-error.js';
import { hasRole } from '../auth/principal.js';
import type { Principal } from '../auth/principal.js';
import type { Authenticators } from '../auth/verifiers.js';
import { tokenDigest } from '../auth/verified-token-cache.js';
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
      const credential = presentedCredential(req);
      if (credential === undefined) throw new AuthenticationError('missing credentials');
      req.principal = await verifyCredentials(credential, authenticators, clientAddress(req));
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

/** What an Authorization header presents, read once per request. */
export interface PresentedCredential {
  /** The credentials, or why the header holds none that can be verified. */
  credentials: Credentials | AuthenticationError;
  /** How the credential is known without being kept: a bearer token's tokenDigest, else the headerDigest. */
  digest(): string;
}

const presented = new WeakMap<Request, PresentedCredential>();

/**
 * The request's Authorization header, parsed and (on first use) digested once per request: the
 * failed-authentication limit and authentication both read it, and the verified-token cache keys on the
 * digest, so a token is hashed once per request. Undefined without the header.
 */
export function presentedCredential(req: Request): PresentedCredential | undefined {
  const known = presented.get(req);
  if (known) return known;
  const header = req.get('authorization');
  if (!header) return undefined;
  const credential = presentedIn(header);
  presented.set(req, credential);
  return credential;
}

function presentedIn(header: string): PresentedCredential {
  const credentials = parsedOrRefused(header);
  let digest: string | undefined;
  return {
    credentials,
    digest: () =>
      (digest ??=
        !(credentials instanceof AuthenticationError) && credentials.scheme === 'bearer'
          ? tokenDigest(credentials.token)
          : headerDigest(header)),
  };
}

/**
 * Whom an Authorization header claims to be, before anything is verified: `basic:<client id>` for a Basic
 * application, otherwise `token:<digest>` (a bearer token names no identity that is cheaper to forge than the
 * token itself). Failed authentications are counted per claimed identity with it.
 */
export function claimedIdentity(header: string): string {
  return identityClaimedBy(presentedIn(header));
}

export function identityClaimedBy({ credentials, digest }: PresentedCredential): string {
  if (!(credentials instanceof AuthenticationError) && credentials.scheme === 'basic') {
    return `basic:${credentials.clientId}`;
  }
  return `token:${digest()}`;
}

function parsedOrRefused(header: string): Credentials | AuthenticationError {
  try {
    return parseAuthorization(header);
  } catch (error) {
    if (error instanceof AuthenticationError) return error;
    throw error;
  }
}

function parseAuthorization(header: string): Credentials {
  const [scheme = '', value = ''] = header.trim().split(/\s+/, 2);
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
  { credentials, digest }: PresentedCredential,
  authenticators: Authenticators,
  address: string,
): Promise<Principal> {
  if (credentials instanceof AuthenticationError) throw credentials;
  if (credentials.scheme === 'bearer' && authenticators.bearer)
    return authenticators.bearer.verify(credentials.token, digest());
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
