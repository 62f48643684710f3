import { describe, expect, it } from 'vitest';
import { parseApplicationCredentials } from '../../../src/auth/application-credentials.js';
import { createBasicVerifier } from '../../../src/auth/basic-verifier.js';
import { runHashSecretCli } from '../../../dev/cli/hash-secret-cli.js';
import { ORG_ID, USER_ID } from './support/tokens.js';

async function run(args: string[], stdin: string) {
  const output = { stdout: '', stderr: '' };
  const code = await runHashSecretCli(args, [stdin], {
    out: (text) => void (output.stdout += text),
    err: (text) => void (output.stderr += text),
  });
  return { code, ...output };
}

describe('hash-secret', () => {
  it('prints a credentials Secret value that verifies the secret from standard input', async () => {
    const { code, stdout } = await run(['--role', 'cos_admin', '--user-id', USER_ID], 'the-app-secret\n');
    expect(code).toBe(0);
    expect(stdout).not.toContain('the-app-secret');
    const credentials = parseApplicationCredentials({ gateway: stdout });
    expect(credentials).toEqual([
      expect.objectContaining({ clientId: 'gateway', roles: ['cos_admin'], userId: USER_ID }),
    ]);
    const principal = await createBasicVerifier(credentials).verify('gateway', 'the-app-secret');
    expect(principal.id).toBe(USER_ID);
  });

  it('--producer-org binds an event_producer application to organisations; org_admin needs --org', async () => {
    const args = ['--role', 'event_producer', '--role', 'org_admin', '--producer-org', ORG_ID];
    const { code, stdout } = await run(args, 'feed-secret');
    expect(code).toBe(0);
    const credentials = parseApplicationCredentials({ feed: stdout });
    const principal = await createBasicVerifier(credentials).verify('feed', 'feed-secret');
    expect(principal.organisations).toEqual([ORG_ID]);
    // No organisationId: the application administers no organisation.
    expect(principal.roles).toEqual(new Set(['event_producer']));
    expect((await run(['--producer-org', 'acme'], 's')).stderr).toContain('--producer-org must be a UUID');
  });

  it('refuses an empty secret', async () => {
    const { code, stderr } = await run([], '\n');
    expect(code).toBe(2);
    expect(stderr).toContain('empty');
  });
});
