import { describe, expect, it } from 'vitest';
import { parseJwks } from '../../../src/auth/jwt-verifier.js';
import { jwksOf, testKey } from './support/tokens.js';

describe('parseJwks', () => {
  it('accepts a JWKS whose keys import', async () => {
    const jwks = jwksOf(await testKey('ES256', 'one'), await testKey('RS256', 'two'));
    expect(await parseJwks(JSON.stringify(jwks))).toEqual(jwks);
  });

  it.each([
    ['not JSON', '{"keys": [', 'JSON'],
    ['no keys', '{"keys": []}', 'non-empty "keys"'],
    ['a key without a type', '{"keys": [{"kid": "a"}]}', 'no "kty"'],
    [
      'a damaged key',
      '{"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "x": "AA", "y": "AA"}]}',
      'Invalid keyData',
    ],
  ])('refuses %s', async (_name, text, message) => {
    await expect(parseJwks(text)).rejects.toThrow(message);
  });
});
