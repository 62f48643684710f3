import { z } from 'zod';
import { readCommandLine } from './cli-arguments.js';
import { processOutput } from './cli-output.js';
import type { CliOutput } from './cli-output.js';
import { ensureDevSigningKey } from '../tokens/dev-signing-key.js';
import {
  DEFAULT_DEV_TOKEN_TTL_SECONDS,
  DEV_TOKEN_AUDIENCE,
  DEV_TOKEN_ISSUER,
  mintToken,
} from '../tokens/dev-token.js';

export const DEFAULT_DEV_DIRECTORY = '.dev';

const USAGE = `Usage: npm run --silent token -- --sub <uuid> [--role <role>]... [--org <uuid>]
         [--ttl <seconds>|<n>s|m|h|d] [--issuer <iss>] [--audience <aud>] [--dir <folder>]

Prints a JWT signed with the development stack's key (created under --dir, default ${DEFAULT_DEV_DIRECTORY}, if missing).
`;

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;

const argumentsSchema = z.object({
  sub: z.uuid({ error: '--sub must be a UUID' }),
  role: z.array(z.string().min(1)).default([]),
  org: z.uuid({ error: '--org must be a UUID' }).optional(),
  ttl: z
    .string()
    .regex(/^[1-9]\d*[smhd]?$/, '--ttl must be seconds or a number with s, m, h or d')
    .transform(durationSeconds)
    .default(DEFAULT_DEV_TOKEN_TTL_SECONDS),
  issuer: z.string().min(1).default(DEV_TOKEN_ISSUER),
  audience: z.string().min(1).default(DEV_TOKEN_AUDIENCE),
  dir: z.string().min(1).default(DEFAULT_DEV_DIRECTORY),
});

/** The `npm run token` command; returns the exit code (0 ok, 2 usage error). */
export async function runDevTokenCli(
  argv: readonly string[],
  output: CliOutput = processOutput,
): Promise<number> {
  const commandLine = readCommandLine(
    argv,
    {
      sub: { type: 'string' },
      role: { type: 'string', multiple: true },
      org: { type: 'string' },
      ttl: { type: 'string' },
      issuer: { type: 'string' },
      audience: { type: 'string' },
      dir: { type: 'string' },
    },
    USAGE,
    output,
  );
  if ('exitCode' in commandLine) return commandLine.exitCode;
  const { values } = commandLine;
  const parsed = argumentsSchema.safeParse(values);
  if (!parsed.success) {
    output.err(`${parsed.error.issues.map((issue) => issue.message).join('\n')}\n${USAGE}`);
    return 2;
  }
  const { sub, role, org, ttl, issuer, audience, dir } = parsed.data;
  const key = await ensureDevSigningKey(dir);
  const token = await mintToken(key, {
    sub,
    roles: role,
    ttlSeconds: ttl,
    issuer,
    audience,
    ...(org ? { org } : {}),
  });
  output.out(`${token}\n`);
  return 0;
}

function durationSeconds(text: string): number {
  const unit = text.at(-1) as string;
  return unit in UNIT_SECONDS
    ? Number(text.slice(0, -1)) * UNIT_SECONDS[unit as keyof typeof UNIT_SECONDS]
    : Number(text);
}
