import { readFile, readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { parseSecretHash } from './secret-hash.js';

/**
 * One application allowed to call with HTTP Basic. In the Kubernetes Secret, the key is the client id and
 * the value is either the bare hash or JSON `{"hash": "scrypt$…", "roles": [...], "userId": "<uuid>",
 * "organisationId": "<uuid>", "organisations": ["<uuid>", ...]}`.
 */
export interface ApplicationCredential {
  clientId: string;
  hash: string;
  roles: readonly string[];
  /** The user the application acts for; without it the application's id is its client id. */
  userId?: string;
  organisationId?: string;
  /** The organisations an `event_producer` application reports memberships for; none when absent. */
  organisations?: readonly string[];
}

/** Secret data keys allow exactly these characters, and none of them is the `:` Basic uses as separator. */
const CLIENT_ID = /^[-._a-zA-Z0-9]+$/;

const entrySchema = z.strictObject({
  hash: z.string(),
  roles: z.array(z.string().min(1)).default([]),
  userId: z.uuid().optional(),
  organisationId: z.uuid().optional(),
  organisations: z.array(z.uuid()).optional(),
});

/** Parses decoded Secret data; a bad entry fails with its key named (never its value). */
export function parseApplicationCredentials(data: Readonly<Record<string, string>>): ApplicationCredential[] {
  return Object.entries(data).map(([clientId, value]) => {
    try {
      return parseEntry(clientId, value.trim());
    } catch (error) {
      const reason = error instanceof z.ZodError ? z.prettifyError(error) : (error as Error).message;
      throw new Error(`application credential ${JSON.stringify(clientId)}: ${reason}`);
    }
  });
}

function parseEntry(clientId: string, value: string): ApplicationCredential {
  if (!CLIENT_ID.test(clientId))
    throw new Error('client id may contain letters, digits, "-", "_" and "." only');
  const entry = value.startsWith('{')
    ? entrySchema.parse(JSON.parse(value))
    : entrySchema.parse({ hash: value });
  parseSecretHash(entry.hash);
  return { clientId, ...entry };
}

/** A Secret's `.data` as the API returns it: values base64-encoded. */
export function decodeSecretData(data: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(data).map(([key, value]) => [key, Buffer.from(value, 'base64').toString('utf8')]),
  );
}

/**
 * A Secret mounted as a volume: one file per key; kubelet's `..data` links and other dot entries are skipped.
 * Read through the `..data` link when there is one, so that the files come from one version of the volume even
 * while kubelet swaps it.
 */
export async function readMountedSecret(directory: string): Promise<Record<string, string>> {
  const version = await realpath(join(directory, '..data')).catch(() => directory);
  const entries: Record<string, string> = {};
  for (const name of (await readdir(version)).sort()) {
    const path = join(version, name);
    if (name.startsWith('.') || !(await stat(path)).isFile()) continue;
    entries[name] = await readFile(path, 'utf8');
  }
  return entries;
}
