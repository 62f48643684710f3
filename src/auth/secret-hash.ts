import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * Application secrets are stored as `scrypt$N$r$p$salt$hash` (salt and hash base64url). node:crypto has
 * scrypt (a memory-hard KDF, RFC 7914) and timingSafeEqual, so no native hashing addon is needed.
 */
export interface ScryptParameters {
  /** N: CPU/memory cost, a power of two. */
  cost: number;
  /** r */
  blockSize: number;
  /** p */
  parallelization: number;
}

/** OWASP's scrypt equivalent of N=2^16,p=1 at half the memory: 32 MiB and about 0.2 s per verification. */
export const DEFAULT_SCRYPT_PARAMETERS: ScryptParameters = {
  cost: 2 ** 15,
  blockSize: 8,
  parallelization: 2,
};

const SALT_BYTES = 16;
const KEY_BYTES = 32;
const PREFIX = 'scrypt';

export interface SecretHash {
  parameters: ScryptParameters;
  salt: Buffer;
  hash: Buffer;
}

export async function hashSecret(
  secret: string,
  parameters: ScryptParameters = DEFAULT_SCRYPT_PARAMETERS,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await derive(secret, salt, KEY_BYTES, parameters);
  const { cost, blockSize, parallelization } = parameters;
  return [
    PREFIX,
    cost,
    blockSize,
    parallelization,
    salt.toString('base64url'),
    hash.toString('base64url'),
  ].join('$');
}

/** Compares in constant time; false for a wrong secret. Throws when `encoded` is not a valid hash. */
export async function verifySecret(secret: string, encoded: string): Promise<boolean> {
  const stored = parseSecretHash(encoded);
  const candidate = await derive(secret, stored.salt, stored.hash.length, stored.parameters);
  return timingSafeEqual(candidate, stored.hash);
}

export function parseSecretHash(encoded: string): SecretHash {
  const parts = encoded.split('$');
  const [prefix, cost, blockSize, parallelization, salt, hash] = parts;
  if (parts.length !== 6 || prefix !== PREFIX) throw new Error('not a scrypt$N$r$p$salt$hash string');
  const parameters = {
    cost: Number(cost),
    blockSize: Number(blockSize),
    parallelization: Number(parallelization),
  };
  checkParameters(parameters);
  const decoded = {
    salt: Buffer.from(salt as string, 'base64url'),
    hash: Buffer.from(hash as string, 'base64url'),
  };
  if (decoded.salt.length < 8 || decoded.hash.length < 16) throw new Error('salt or hash too short');
  return { parameters, ...decoded };
}

/** Bounds keep a mistyped hash from costing gigabytes or minutes per request. */
function checkParameters({ cost, blockSize, parallelization }: ScryptParameters): void {
  const isPowerOfTwo =
    Number.isInteger(cost) && cost >= 2 ** 10 && cost <= 2 ** 20 && (cost & (cost - 1)) === 0;
  if (!isPowerOfTwo) throw new Error('N must be a power of two from 2^10 to 2^20');
  if (!Number.isInteger(blockSize) || blockSize < 1 || blockSize > 32) throw new Error('r must be 1 to 32');
  if (!Number.isInteger(parallelization) || parallelization < 1 || parallelization > 16) {
    throw new Error('p must be 1 to 16');
  }
}

function derive(secret: string, salt: Buffer, length: number, parameters: ScryptParameters): Promise<Buffer> {
  const { cost: N, blockSize: r, parallelization: p } = parameters;
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, length, { N, r, p, maxmem: 256 * N * r }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}
