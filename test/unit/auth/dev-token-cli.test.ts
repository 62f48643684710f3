import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import type { CliOutput } from '../../../dev/cli/cli-output.js';
import { DEV_JWKS_FILE } from '../../../dev/tokens/dev-signing-key.js';
import { runDevTokenCli } from '../../../dev/cli/dev-token-cli.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER } from '../../../dev/tokens/dev-token.js';
import { createJwtVerifier } from '../../../src/auth/jwt-verifier.js';
import { ORG_ID, USER_ID } from './support/tokens.js';

function captured(): CliOutput & { stdout: string; stderr: string } {
  const output = {
    stdout: '',
    stderr: '',
    out: (text: string) => void (output.stdout += text),
    err: (text: string) => void (output.stderr += text),
  };
  return output;
}

async function run(args: string[]) {
  const dir = join(await mkdtemp(join(tmpdir(), 'cli-')), '.dev');
  const output = captured();
  const code = await runDevTokenCli([...args, '--dir', dir], output);
  return { code, dir, ...output };
}

describe('npm run token', () => {
  it('prints one token that the dev JWKS verifies', async () => {
    const { code, dir, stdout, stderr } = await run([
      '--sub',
      USER_ID,
      '--role',
      'org_admin',
      '--role',
      'cos_admin',
      '--org',
      ORG_ID,
    ]);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const verifier = await createJwtVerifier({
      keys: { kind: 'jwks-file', path: join(dir, DEV_JWKS_FILE) },
      issuer: DEV_TOKEN_ISSUER,
      audience: DEV_TOKEN_AUDIENCE,
    });
    expect(await verifier.verify(stdout.trim())).toEqual({
      kind: 'user',
      id: USER_ID,
      roles: new Set(['org_admin', 'cos_admin']),
      organisationId: ORG_ID,
    });
  });

  it('takes a lifetime with a unit', async () => {
    const { stdout } = await run(['--sub', USER_ID, '--ttl', '2h']);
    const claims = decodeJwt(stdout.trim());
    expect((claims.exp as number) - (claims.iat as number)).toBe(7_200);
  });

  it.each([
    [['--role', 'x'], /--sub must be a UUID/],
    [['--sub', 'alice'], /--sub must be a UUID/],
    [['--sub', USER_ID, '--org', 'acme'], /--org must be a UUID/],
    [['--sub', USER_ID, '--ttl', '0'], /--ttl must be/],
    [['--sub', USER_ID, '--colour', 'blue'], /Unknown option '--colour'/],
  ])('refuses %j with exit code 2 and the usage', async (args, message) => {
    const { code, stdout, stderr } = await run(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(message);
    expect(stderr).toContain('Usage: npm run --silent token');
  });

  it('prints the usage for --help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toContain('--sub <uuid>');
  });
});
