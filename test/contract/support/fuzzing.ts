import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import { repoRoot } from '../../../dev/localplane/repo-root.js';

/** CI's fixed seed and example budget per operation: the ACL API's run fits in minutes on two shared cores. */
export const CI_SEED = '20261127';
export const CI_EXAMPLES_PER_OPERATION = 20;

/** `NAME=value` lines: the environment of the stack that is fuzzed (its limits raised; the file says why). */
export const FUZZING_ENV_FILE = join(repoRoot(), 'test/contract/fuzzing.env');

export function fuzzingStackEnv(): NodeJS.ProcessEnv {
  return parseEnv(readFileSync(FUZZING_ENV_FILE, 'utf8'));
}
