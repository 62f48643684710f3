import { z } from 'zod';
import { AuthenticationError } from './authentication-error.js';
import { boundRoles, type Principal } from './principal.js';

/**
 * Names of the JWT claims that carry the roles and the organisation; a dotted name (`realm_access.roles`) is a
 * path into nested objects.
 */
export interface TokenClaimNames {
  roles: string;
  organisation: string;
}

export const DEFAULT_TOKEN_CLAIM_NAMES: TokenClaimNames = { roles: 'roles', organisation: 'org' };

const uuid = z.uuid();
const roleList = z.union([z.array(z.string().min(1)), z.string()]);

/** sub must be a UUID; roles are an array or a space-separated string; the organisation, if present, a UUID. */
export function principalFromClaims(claims: Record<string, unknown>, names: TokenClaimNames): Principal {
  const sub = uuid.safeParse(claims.sub);
  if (!sub.success) throw new AuthenticationError('invalid token', { cause: new Error('sub is not a UUID') });
  const organisationId = readOrganisation(readClaim(claims, names.organisation), names.organisation);
  return {
    kind: 'user',
    id: sub.data,
    roles: boundRoles(readRoles(readClaim(claims, names.roles), names.roles), organisationId),
    ...(organisationId === undefined ? {} : { organisationId }),
  };
}

/** A claim by its literal name first (URL-like names contain dots), then by dotted path. */
export function readClaim(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  return name.split('.').reduce<unknown>((value, key) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    return (value as Record<string, unknown>)[key];
  }, claims);
}

/** The inverse of readClaim's dotted path, for minting tokens. */
export function writeClaim(claims: Record<string, unknown>, name: string, value: unknown): void {
  const keys = name.split('.');
  const last = keys.pop() as string;
  let target = claims;
  for (const key of keys) {
    const next = target[key];
    target =
      typeof next === 'object' && next !== null ? (next as Record<string, unknown>) : (target[key] = {});
  }
  target[last] = value;
}

function readRoles(value: unknown, claim: string): ReadonlySet<string> {
  if (value === undefined) return new Set();
  const parsed = roleList.safeParse(value);
  if (!parsed.success)
    throw new AuthenticationError('invalid token', { cause: new Error(`${claim} is malformed`) });
  const roles = typeof parsed.data === 'string' ? parsed.data.split(' ') : parsed.data;
  return new Set(roles.filter((role) => role !== ''));
}

function readOrganisation(value: unknown, claim: string): string | undefined {
  if (value === undefined) return undefined;
  const parsed = uuid.safeParse(value);
  if (!parsed.success)
    throw new AuthenticationError('invalid token', { cause: new Error(`${claim} is not a UUID`) });
  return parsed.data;
}
