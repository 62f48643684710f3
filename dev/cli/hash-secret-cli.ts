import { z } from 'zod';
import { readCommandLine } from './cli-arguments.js';
import { processOutput } from './cli-output.js';
import type { CliOutput } from './cli-output.js';
import { hashSecret } from '../../src/auth/secret-hash.js';
import { estimatedEntropyBits, MINIMUM_SECRET_BITS } from './secret-entropy.js';

const USAGE = `Usage: printf %s "$SECRET" | hash-secret [--role <role>]... [--user-id <uuid>] [--org <uuid>]
       [--producer-org <uuid>]...

Reads an application secret from standard input (never from arguments, which other users can see) and prints
the value for the application's key in the credentials Secret. The secret must be random: a short or
repetitive one is refused; make one with openssl rand -base64 32. --producer-org names an organisation
an event_producer application may report memberships for (its "organisations").
`;

const argumentsSchema = z.object({
  role: z.array(z.string().min(1)).default([]),
  'user-id': z.uuid({ error: '--user-id must be a UUID' }).optional(),
  org: z.uuid({ error: '--org must be a UUID' }).optional(),
  'producer-org': z.array(z.uuid({ error: '--producer-org must be a UUID' })).optional(),
});

/** Prints `{"hash": "scrypt$…", "roles": [...], ...}`; returns the exit code (0 ok, 2 usage error). */
export async function runHashSecretCli(
  argv: readonly string[],
  input: AsyncIterable<string | Buffer> | Iterable<string | Buffer>,
  output: CliOutput = processOutput,
): Promise<number> {
  const commandLine = readCommandLine(
    argv,
    {
      role: { type: 'string', multiple: true },
      'user-id': { type: 'string' },
      org: { type: 'string' },
      'producer-org': { type: 'string', multiple: true },
    },
    USAGE,
    output,
  );
  if ('exitCode' in commandLine) return commandLine.exitCode;
  const { values } = commandLine;
  const parsed = argumentsSchema.safeParse(values);
  const secret = (await readAll(input)).replace(/\r?\n$/, '');
  const problems = parsed.success ? secretProblems(secret) : parsed.error.issues.map((i) => i.message);
  if (!parsed.success || problems.length > 0) {
    output.err(`${problems.join('\n')}\n${USAGE}`);
    return 2;
  }
  const { role, 'user-id': userId, org, 'producer-org': organisations } = parsed.data;
  const entry = {
    hash: await hashSecret(secret),
    roles: role,
    ...(userId ? { userId } : {}),
    ...(org ? { organisationId: org } : {}),
    ...(organisations ? { organisations } : {}),
  };
  output.out(`${JSON.stringify(entry)}\n`);
  return 0;
}

/** A weak secret would make its scrypt hash a short dictionary search for anyone who reads the Secret. */
function secretProblems(secret: string): string[] {
  if (secret === '') return ['the secret on standard input is empty'];
  const bits = estimatedEntropyBits(secret);
  if (bits >= MINIMUM_SECRET_BITS) return [];
  return [
    `the secret is too guessable: an estimated ${Math.floor(bits)} bits of entropy, at least ${MINIMUM_SECRET_BITS} needed; use a random one, e.g. openssl rand -base64 32`,
  ];
}

async function readAll(input: AsyncIterable<string | Buffer> | Iterable<string | Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of input) text += chunk.toString();
  return text;
}
