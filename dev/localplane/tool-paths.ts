import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './repo-root.js';

export interface ToolPaths {
  etcd: string;
  kubeApiserver: string;
  kubectl: string;
  spicedb: string;
  helm: string;
}

const run = promisify(execFile);

/**
 * Finds the pinned binaries. Explicit variables win, as in controller-runtime's envtest
 * (TEST_ASSET_* over KUBEBUILDER_ASSETS); anything still missing is built by hack/tools/env.sh,
 * which returns at once when the per-machine cache already has it.
 */
export async function resolveToolPaths(env: NodeJS.ProcessEnv = process.env): Promise<ToolPaths> {
  const explicit = explicitToolPaths(env);
  if (Object.values(explicit).every((path) => path !== undefined)) return explicit as ToolPaths;
  const built = await buildPinnedTools();
  const exported = (name: string) => {
    const value = built[name];
    if (!value) throw new Error(`hack/tools/env.sh did not export ${name}`);
    return value;
  };
  return {
    etcd: explicit.etcd ?? join(exported('KUBEBUILDER_ASSETS'), 'etcd'),
    kubeApiserver: explicit.kubeApiserver ?? join(exported('KUBEBUILDER_ASSETS'), 'kube-apiserver'),
    kubectl: explicit.kubectl ?? exported('KUBECTL_BIN'),
    spicedb: explicit.spicedb ?? exported('SPICEDB_BIN'),
    helm: explicit.helm ?? exported('HELM_BIN'),
  };
}

function explicitToolPaths(env: NodeJS.ProcessEnv): Partial<ToolPaths> {
  const assets = env.KUBEBUILDER_ASSETS;
  const fromAssets = (name: string) => (assets ? existing(join(assets, name)) : undefined);
  return {
    etcd: env.TEST_ASSET_ETCD ?? fromAssets('etcd'),
    kubeApiserver: env.TEST_ASSET_KUBE_APISERVER ?? fromAssets('kube-apiserver'),
    kubectl: env.TEST_ASSET_KUBECTL ?? env.KUBECTL_BIN ?? fromAssets('kubectl'),
    spicedb: env.SPICEDB_BIN,
    helm: env.HELM_BIN,
  };
}

function existing(path: string): string | undefined {
  return existsSync(path) ? path : undefined;
}

/**
 * Builds whatever the cache lacks of `tools` (hack/tools/build.sh's names; none: its default list), then returns
 * the `export NAME=value` lines of hack/tools/env.sh.
 */
export async function buildPinnedTools(tools: string[] = []): Promise<Record<string, string>> {
  const script = join(repoRoot(), 'hack/tools/env.sh');
  // The build prints progress on stderr; pass it through so a cold build is not silent.
  const child = run('bash', [script, ...tools], { maxBuffer: 1 << 20 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return parseExports(stdout);
}

export function parseExports(text: string): Record<string, string> {
  const exports: Record<string, string> = {};
  for (const match of text.matchAll(/^export ([A-Z_]+)=(.*)$/gm))
    exports[match[1] as string] = match[2] as string;
  return exports;
}
