// Another commit of this repository built beside the working tree, for a benchmark that compares the two in one
// run: a git worktree of the commit under dist/ (git-ignored), with this repository's node_modules, compiled
// as the benchmarks compile the working tree. The worktree is made once per commit; each run compiles it again.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../dev/localplane/repo-root.js';
import { compileInto } from './node-runtime.js';

const run = promisify(execFile);

/** Below the repository's dist/ (git-ignored): one worktree per commit, named by its full hash. */
const WORKTREES = 'dist/against';

export interface CommitBuild {
  /** The full hash of the commit. */
  commit: string;
  /** The compiled JavaScript of `source` (a path below the repository, `.ts`) as built in the commit's tree. */
  entry: string;
}

/**
 * `source` (a file of the working tree, copied into the commit's tree: it must import only what that commit has)
 * compiled with the commit's `src/`. The commit's own type errors against today's node_modules do not stop the
 * build (tsc emits regardless); a missing import does.
 */
export async function buildCommit(commit: string, source: string): Promise<CommitBuild> {
  const root = repoRoot();
  const hash = (await git(root, 'rev-parse', '--verify', `${commit}^{commit}`)).trim();
  const tree = join(root, WORKTREES, hash);
  if (!existsSync(tree)) {
    await git(root, 'worktree', 'add', '--detach', tree, hash);
    await symlink(join(root, 'node_modules'), join(tree, 'node_modules'));
  }
  await mkdir(dirname(join(tree, source)), { recursive: true });
  await copyFile(join(root, source), join(tree, source));
  const compiled = await compileInto(tree, ['src', source], () =>
    console.log(
      `the build of ${hash.slice(0, 12)} reported type errors; its JavaScript was emitted regardless`,
    ),
  );
  const entry = compiled(source);
  if (!existsSync(entry)) throw new Error(`${entry} was not built`);
  return { commit: hash, entry };
}

async function git(root: string, ...args: string[]): Promise<string> {
  return (await run('git', ['-C', root, ...args])).stdout;
}
