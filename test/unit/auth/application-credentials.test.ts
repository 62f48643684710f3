import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  decodeSecretData,
  parseApplicationCredentials,
  readMountedSecret,
} from '../../../src/auth/application-credentials.js';
import { hashSecret } from '../../../src/auth/secret-hash.js';
import { ORG_ID, USER_ID } from './support/tokens.js';
import { FAST } from './support/fast-scrypt.js';

let hash: string;

beforeAll(async () => {
  hash = await hashSecret('s3cret', FAST);
});

describe('parseApplicationCredentials', () => {
  it('accepts a bare hash: an application without roles', () => {
    expect(parseApplicationCredentials({ 'catalogue-server': `${hash}\n` })).toEqual([
      { clientId: 'catalogue-server', hash, roles: [] },
    ]);
  });

  it('accepts a JSON entry with roles, user and organisation', () => {
    const entry = JSON.stringify({ hash, roles: ['cos_admin'], userId: USER_ID, organisationId: ORG_ID });
    expect(parseApplicationCredentials({ gateway: entry })).toEqual([
      { clientId: 'gateway', hash, roles: ['cos_admin'], userId: USER_ID, organisationId: ORG_ID },
    ]);
  });

  it('names the bad entry without printing its value', () => {
    const secretLooking = 'plain-text-password';
    expect(() => parseApplicationCredentials({ gateway: secretLooking })).toThrow(/"gateway"/);
    expect(() => parseApplicationCredentials({ gateway: secretLooking })).not.toThrow(/plain-text-password/);
  });

  it('rejects unknown fields, a non-UUID user and a bad client id', () => {
    expect(() => parseApplicationCredentials({ a: JSON.stringify({ hash, role: 'x' }) })).toThrow(/"a"/);
    expect(() => parseApplicationCredentials({ a: JSON.stringify({ hash, userId: 'bob' }) })).toThrow(
      /userId/,
    );
    expect(() => parseApplicationCredentials({ 'a:b': hash })).toThrow(/client id/);
  });
});

describe('Secret sources', () => {
  it('decodes the base64 data of a Secret read from the API', () => {
    expect(decodeSecretData({ gateway: Buffer.from(hash).toString('base64') })).toEqual({ gateway: hash });
  });

  it('reads a mounted Secret volume and skips kubelet bookkeeping entries', async () => {
    const volume = await mkdtemp(join(tmpdir(), 'secret-'));
    const data = join(volume, '..2025_01_01_00_00_00.000000000');
    await mkdir(data);
    await writeFile(join(data, 'gateway'), hash);
    await symlink(data, join(volume, '..data'));
    await symlink(join('..data', 'gateway'), join(volume, 'gateway'));
    expect(await readMountedSecret(volume)).toEqual({ gateway: hash });
  });
});
