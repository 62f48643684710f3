import { SignJWT, exportJWK, exportSPKI, generateKeyPair } from 'jose';
import type { CryptoKey, JSONWebKeySet, JWK, JWTPayload } from 'jose';

export const ISSUER = 'https://idp.example/realms/dx';
export const AUDIENCE = 'policy-grant-operator';
export const USER_ID = '3f8e0c4e-2a7b-4c55-9d61-0e9f3b1a2c7d';
export const ORG_ID = '9b2d6a1e-5c3f-4e8a-b7d0-1f2e3a4b5c6d';

export interface TestKey {
  alg: 'RS256' | 'ES256';
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
  publicPem: string;
}

export async function testKey(alg: TestKey['alg'], kid: string): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return {
    alg,
    kid,
    privateKey,
    publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' },
    publicPem: await exportSPKI(publicKey),
  };
}

export function jwksOf(...keys: TestKey[]): JSONWebKeySet {
  return { keys: keys.map((key) => key.publicJwk) };
}

export interface SignOptions {
  issuer?: string;
  audience?: string;
  subject?: string | null;
  /** Seconds from now; negative for an expired token; null for none. */
  expiresIn?: number | null;
  kid?: string;
  /** Seconds since it was issued (60 by default); null for no iat. */
  issuedAgo?: number | null;
  /** The typ header (JWT by default); null for none. */
  typ?: string | null;
}

/** A token as the identity provider would issue it, with every knob a test needs to break it. */
export function signToken(key: TestKey, claims: JWTPayload = {}, options: SignOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT(claims)
    .setProtectedHeader({
      alg: key.alg,
      kid: options.kid ?? key.kid,
      ...(options.typ === null ? {} : { typ: options.typ ?? 'JWT' }),
    })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE);
  if (options.issuedAgo !== null) jwt.setIssuedAt(now - (options.issuedAgo ?? 60));
  if (options.subject !== null) jwt.setSubject(options.subject ?? USER_ID);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 300));
  return jwt.sign(key.privateKey);
}

/** `alg: none`: header and payload, empty signature. */
export function unsignedToken(claims: JWTPayload): string {
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`;
}

/** The algorithm-confusion attack: HS256 keyed with the verifier's public key. */
export function hs256WithPublicKey(key: TestKey, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid: key.kid, typ: 'JWT' })
    .sign(new TextEncoder().encode(key.publicPem));
}

export function standardClaims(extra: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return { iss: ISSUER, aud: AUDIENCE, sub: USER_ID, iat: now, exp: now + 300, ...extra };
}
