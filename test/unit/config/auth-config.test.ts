import { describe, expect, it } from 'vitest';
import { authEnvironment } from '../../../src/config/auth-config.js';
import { ConfigurationError, readEnvironment } from '../../../src/config/environment.js';

const base = { JWT_ISSUER: 'https://id.example/', JWT_AUDIENCE: 'acl' };

describe('JWKS_URL', () => {
  it('accepts an https URL', () => {
    const env = readEnvironment(authEnvironment, { ...base, JWKS_URL: 'https://id.example/jwks' });
    expect(env).toMatchObject({ JWKS_URL: 'https://id.example/jwks', JWKS_ALLOW_HTTP: false });
  });

  it('refuses an http URL at startup, naming the setting and the development flag', () => {
    const read = () => readEnvironment(authEnvironment, { ...base, JWKS_URL: 'http://id.example/jwks' });
    expect(read).toThrow(ConfigurationError);
    expect(read).toThrow(/JWKS_URL: must be an https URL .*JWKS_ALLOW_HTTP=true/);
  });

  it('accepts http with JWKS_ALLOW_HTTP=true (development)', () => {
    const env = readEnvironment(authEnvironment, {
      ...base,
      JWKS_URL: 'http://127.0.0.1:8089/jwks',
      JWKS_ALLOW_HTTP: 'true',
    });
    expect(env).toMatchObject({ JWKS_URL: 'http://127.0.0.1:8089/jwks', JWKS_ALLOW_HTTP: true });
  });

  it('refuses other schemes even with the flag, and a flag that is not true or false', () => {
    expect(() =>
      readEnvironment(authEnvironment, {
        ...base,
        JWKS_URL: 'ftp://id.example/jwks',
        JWKS_ALLOW_HTTP: 'true',
      }),
    ).toThrow(/JWKS_URL/);
    expect(() =>
      readEnvironment(authEnvironment, {
        ...base,
        JWKS_URL: 'https://id.example/jwks',
        JWKS_ALLOW_HTTP: 'yes',
      }),
    ).toThrow(/JWKS_ALLOW_HTTP/);
  });

  it('a JWKS_FILE needs no flag', () => {
    expect(readEnvironment(authEnvironment, { ...base, JWKS_FILE: '/etc/jwks/jwks.json' })).toMatchObject({
      JWKS_FILE: '/etc/jwks/jwks.json',
    });
  });
});
