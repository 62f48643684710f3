// How a benchmark starts a TypeScript entrypoint in a Node process of its own: `compiled` (the default) runs
// the JavaScript tsc emits under plain node with source maps enabled, as the container image does; `tsx` runs the sources through tsx's
// loader, which costs the process about 75 MB of RSS (the loader, esbuild and the sources' maps), so that
// memory figures taken through it overstate what an installation uses.
import { execFile, spawn } from 'node:child_process';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { repoRoot } from '../../dev/localplane/repo-root.js';

export const NODE_RUNTIMES = ['compiled', 'tsx'] as const;
export type NodeRuntime = (typeof NODE_RUNTIMES)[number];

/** Inside dist/ (git-ignored), below the repository's package.json: module type and node_modules resolve. */
const BUILD_DIR = 'dist/.bench';
/** Files the sources read next to themselves at run time. */
const RUNTIME_ASSETS = ['src/spicedb/schema.zed', 'src/spicedb/registry.yaml'];

export function parseNodeRuntime(value: string): NodeRuntime {
  const runtime = NODE_RUNTIMES.find((known) => known === value);
  if (!runtime) throw new Error(`--runtime must be one of ${NODE_RUNTIMES.join(', ')}, not "${value}"`);
  return runtime;
}

let build: Promise<unknown> | undefined;

/** Node's arguments that run `entrypoint` (a .ts path below the repository) with `runtime`. */
export async function entrypointArgs(runtime: NodeRuntime, entrypoint: string): Promise<string[]> {
  const root = repoRoot();
  const source = relative(root, entrypoint);
  if (runtime === 'tsx') return ['--import', 'tsx', join(root, source)];
  build ??= compileInto(root, ['src', 'bench']);
  await build;
  return ['--enable-source-maps', join(root, BUILD_DIR, source.replace(/\.ts$/, '.js'))];
}

/**
 * tsc with the settings of the tree at `root`, the folders or files `include` only (once per benchmark run; about
 * 15 s), into its `dist/.bench/`. Returns the compiled path of a source below `root`. `onTypeErrors`: called
 * instead of failing when tsc reports errors (it emits regardless).
 */
export async function compileInto(
  root: string,
  include: readonly string[],
  onTypeErrors?: (error: unknown) => void,
): Promise<(source: string) => string> {
  const outDir = join(root, BUILD_DIR);
  await mkdir(outDir, { recursive: true });
  const tsconfig = join(outDir, 'tsconfig.json');
  await writeFile(
    tsconfig,
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { rootDir: root, outDir, noEmit: false },
      include: include.map((path) => join(root, path)),
    }),
  );
  await promisify(execFile)(process.execPath, [
    join(root, 'node_modules/typescript/bin/tsc'),
    '-p',
    tsconfig,
  ]).catch((error: unknown) => {
    if (!onTypeErrors) throw error;
    onTypeErrors(error);
  });
  for (const asset of RUNTIME_ASSETS) await copyFile(join(root, asset), join(outDir, asset));
  return (source) => join(outDir, source.replace(/\.ts$/, '.js'));
}

/** Whether the module of `moduleUrl` runs from its TypeScript source (through tsx) rather than compiled. */
export function runsFromSource(moduleUrl: string): boolean {
  return moduleUrl.endsWith('.ts');
}

/**
 * A sibling module of the caller's (`path` relative to the caller's folder, written with `.ts`) to run the way the
 * caller runs: through tsx from the sources (node's `execArgv` load it), or compiled.
 */
export function siblingModule(callerUrl: string, path: string): { path: string; execArgv: string[] } {
  const source = fileURLToPath(new URL(path, callerUrl));
  return runsFromSource(callerUrl)
    ? { path: source, execArgv: ['--import', 'tsx'] }
    : { path: source.replace(/\.ts$/, '.js'), execArgv: [] };
}

/**
 * Runs the benchmark module `moduleUrl` compiled, with this process's arguments, when it runs from its source and
 * `runtime` is `compiled`: what it measures of the project's code is then what the image runs (tsx's transform
 * keeps function names, one more call for every closure made). Resolves true once that run ended (its exit code is
 * this process's); false when the caller is to run itself.
 */
export async function runCompiled(moduleUrl: string, runtime: NodeRuntime): Promise<boolean> {
  if (runtime === 'tsx' || !runsFromSource(moduleUrl)) return false;
  const args = await entrypointArgs('compiled', fileURLToPath(moduleUrl));
  const child = spawn(process.execPath, [...args, ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exitCode = await new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
  return true;
}
