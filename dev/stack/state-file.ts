import { rename, writeFile } from 'node:fs/promises';

/** The stack's `NAME=value` file (`.dev/env`) that scripts and tests read to find the running stack. */
export interface DevStackEnv {
  KUBECONFIG: string;
  ACL_URL: string;
  DECISION_URL: string;
  CONTROLLER_URL: string;
  SPICEDB_ENDPOINT: string;
  SPICEDB_TOKEN: string;
  NAMESPACE: string;
  /** The audit database, as its owner (psql "$DATABASE_URL"). */
  DATABASE_URL: string;
}

/** Appears whole (written aside, then renamed): a reader that finds the file finds all of it. */
export async function writeStateFile(path: string, env: DevStackEnv): Promise<void> {
  const lines = Object.entries(env).map(([name, value]) => `${name}=${value}`);
  const partial = `${path}.partial`;
  await writeFile(partial, `${lines.join('\n')}\n`, { mode: 0o600 });
  await rename(partial, path);
}

export function parseStateFile(text: string): Partial<DevStackEnv> {
  const entries = text
    .split('\n')
    .map((line) => /^([A-Z_]+)=(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => [match[1], match[2]]);
  return Object.fromEntries(entries);
}
