import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseApplicationCredentials } from '../../../src/auth/application-credentials.js';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { runHashSecretCli } from '../../../dev/cli/hash-secret-cli.js';
import { estimatedEntropyBits, MINIMUM_SECRET_BITS } from '../../../dev/cli/secret-entropy.js';
import { ORG_ID, USER_ID } from './support/tokens.js';

async function run(args: string[], stdin: string) {
  const output = { stdout: '', stderr: '' };
  const code = await runHashSecretCli(args, [stdin], {
    out: (text) => void (output.stdout += text),
    err: (text) => void (output.stderr += text),
  });
  return { code, ...output };
}

/** What `openssl rand -base64 32` gives. */
const randomSecret = () => randomBytes(32).toString('base64');

describe('hash-secret', () => {
  it('prints a credentials Secret value that verifies the secret from standard input', async () => {
    const secret = randomSecret();
    const { code, stdout } = await run(['--role', 'cos_admin', '--user-id', USER_ID], `${secret}\n`);
    expect(code).toBe(0);
    expect(stdout).not.toContain(secret);
    const credentials = parseApplicationCredentials({ gateway: stdout });
    expect(credentials).toEqual([
      expect.objectContaining({ clientId: 'gateway', roles: ['cos_admin'], userId: USER_ID }),
    ]);
    const principal = await createBasicVerifier(credentials).verify('gateway', secret);
    expect(principal.id).toBe(USER_ID);
  });

  it('--producer-org binds an event_producer application to organisations; org_admin needs --org', async () => {
    const args = ['--role', 'event_producer', '--role', 'org_admin', '--producer-org', ORG_ID];
    const secret = randomSecret();
    const { code, stdout } = await run(args, secret);
    expect(code).toBe(0);
    const credentials = parseApplicationCredentials({ feed: stdout });
    const principal = await createBasicVerifier(credentials).verify('feed', secret);
    expect(principal.organisations).toEqual([ORG_ID]);
    // No organisationId: the application administers no organisation.
    expect(principal.roles).toEqual(new Set(['event_producer']));
    expect((await run(['--producer-org', 'acme'], randomSecret())).stderr).toContain(
      '--producer-org must be a UUID',
    );
  });

  it('refuses an empty secret', async () => {
    const { code, stderr } = await run([], '\n');
    expect(code).toBe(2);
    expect(stderr).toContain('empty');
  });

  it.each([
    ['a one-character secret', 'a'],
    ['a dictionary word', 'changeme'],
    ['a short pattern repeated', 'aB3$'.repeat(8)],
    ['a random secret of 8 bytes', randomBytes(8).toString('hex')],
  ])('refuses %s, naming its estimated entropy, and prints no hash', async (_case, secret) => {
    const { code, stdout, stderr } = await run(['--role', 'decision_client'], secret);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/too guessable: an estimated \d+ bits of entropy, at least 80 needed/);
  });

  it('accepts every random secret of 16 bytes, in hex or base64', () => {
    for (let i = 0; i < 1_000; i++) {
      const bytes = randomBytes(16);
      expect(estimatedEntropyBits(bytes.toString('hex'))).toBeGreaterThanOrEqual(MINIMUM_SECRET_BITS);
      expect(estimatedEntropyBits(bytes.toString('base64'))).toBeGreaterThanOrEqual(MINIMUM_SECRET_BITS);
    }
  });
});
