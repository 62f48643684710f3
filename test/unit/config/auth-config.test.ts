import { describe, expect, it } from 'vitest';
import { authEnvironment, authSettingsFromEnvironment } from '../../../src/config/auth-config.js';
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

describe('authSettingsFromEnvironment', () => {
  it('reads the authenticators’ settings with the documented defaults', () => {
    expect(authSettingsFromEnvironment({ ...base, JWKS_URL: 'https://id.example/jwks' })).toEqual({
      jwks: { url: 'https://id.example/jwks' },
      issuer: 'https://id.example/',
      audience: 'acl',
      algorithms: ['RS256', 'ES256'],
      maxTokenAgeMs: 86_400_000,
      claimNames: { roles: 'roles', organisation: 'org' },
      reloadIntervalMs: 5_000,
      scrypt: { concurrency: 1, queue: 16 },
    });
  });

  it('reads a JWKS file, the claims, the Basic credentials folder and the scrypt bound', () => {
    const settings = authSettingsFromEnvironment({
      ...base,
      JWKS_FILE: '/etc/jwks/jwks.json',
      JWT_ALGORITHMS: 'ES256',
      JWT_MAX_AGE: '1h',
      ROLES_CLAIM: 'groups',
      ORG_CLAIM: 'tenant',
      BASIC_CREDENTIALS_DIR: '/etc/basic',
      CREDENTIALS_RELOAD_INTERVAL: '30s',
      BASIC_AUTH_CONCURRENCY: '4',
      BASIC_AUTH_QUEUE: '0',
    });
    expect(settings).toEqual({
      jwks: { file: '/etc/jwks/jwks.json' },
      issuer: 'https://id.example/',
      audience: 'acl',
      algorithms: ['ES256'],
      maxTokenAgeMs: 3_600_000,
      claimNames: { roles: 'groups', organisation: 'tenant' },
      basicCredentialsDir: '/etc/basic',
      reloadIntervalMs: 30_000,
      scrypt: { concurrency: 4, queue: 0 },
    });
  });

  it('names the variable that is wrong', () => {
    expect(() => authSettingsFromEnvironment({ JWKS_FILE: '/etc/jwks.json', JWT_AUDIENCE: 'acl' })).toThrow(
      /JWT_ISSUER/,
    );
    expect(() => authSettingsFromEnvironment(base)).toThrow(/set exactly one of JWKS_URL and JWKS_FILE/);
  });
});
