import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK } from 'jose';
import type { CryptoKey, JSONWebKeySet, JWK } from 'jose';

export const DEV_SIGNING_ALGORITHM = 'ES256';
/** The private key (JWK), readable by its owner only. */
export const DEV_SIGNING_KEY_FILE = 'token-signing-key.jwk.json';
/** The public key set the services verify development tokens with. */
export const DEV_JWKS_FILE = 'jwks.json';

export interface DevSigningKey {
  kid: string;
  algorithm: string;
  privateKey: CryptoKey;
  jwks: JSONWebKeySet;
  jwksPath: string;
}

const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']);

/**
 * The development stack's token signing key under `directory` (the git-ignored `.dev/`): loaded when present,
 * generated once otherwise, and its public JWKS (re)written beside it. Safe when the stack and the token
 * command race to create it: the key file appears atomically and the loser reads the winner's key.
 */
export async function ensureDevSigningKey(directory: string): Promise<DevSigningKey> {
  await mkdir(directory, { recursive: true, mode: 0o700 });
  const privateJwk = await loadOrCreatePrivateJwk(join(directory, DEV_SIGNING_KEY_FILE));
  const publicJwk = Object.fromEntries(
    Object.entries(privateJwk).filter(([name]) => !PRIVATE_MEMBERS.has(name)),
  );
  const jwks: JSONWebKeySet = { keys: [publicJwk] };
  const jwksPath = join(directory, DEV_JWKS_FILE);
  await writeAtomically(jwksPath, `${JSON.stringify(jwks, null, 2)}\n`, 0o644);
  return {
    kid: privateJwk.kid as string,
    algorithm: DEV_SIGNING_ALGORITHM,
    privateKey: (await importJWK(privateJwk, DEV_SIGNING_ALGORITHM)) as CryptoKey,
    jwks,
    jwksPath,
  };
}

async function loadOrCreatePrivateJwk(path: string): Promise<JWK> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as JWK;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const candidate = `${path}.${randomUUID()}.tmp`;
  await writeFile(candidate, `${JSON.stringify(await generatePrivateJwk(), null, 2)}\n`, { mode: 0o600 });
  try {
    await link(candidate, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(candidate);
  }
  return JSON.parse(await readFile(path, 'utf8')) as JWK;
}

async function generatePrivateJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(DEV_SIGNING_ALGORITHM, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const { kty, crv, x, y } = jwk;
  const kid = await calculateJwkThumbprint({ kty, crv, x, y } as JWK);
  return { ...jwk, kid, alg: DEV_SIGNING_ALGORITHM, use: 'sig' };
}

async function writeAtomically(path: string, content: string, mode: number): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporary, content, { mode });
  await rename(temporary, path);
}
