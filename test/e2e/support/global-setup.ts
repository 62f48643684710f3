import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { repoRoot } from '../../../src/localplane/repo-root.js';
import { resolveToolPaths } from '../../../src/localplane/tool-paths.js';
import { parseStateFile, type DevStackEnv } from '../../../src/devstack/state-file.js';
import { startGateway } from './gateway.js';
import type { E2eEnvironment } from './e2e-environment.js';

/**
 * The end-to-end suite drives a running stack only from outside. By default it starts one exactly as a
 * developer does (`npm start`'s entrypoint, in a temporary state folder, on free ports); E2E_ENV_FILE
 * points it at a stack that is already running instead (e.g. `.dev/env`, or hack/kind-e2e.sh's).
 */
export default async function setup(project: TestProject) {
  const started = Date.now();
  const stack = process.env.E2E_ENV_FILE ? undefined : await startDevStack();
  const envFile = process.env.E2E_ENV_FILE ?? (stack?.envFile as string);
  const env = parseStateFile(await readFile(envFile, 'utf8')) as DevStackEnv;
  const gateway = await startGateway([
    { prefix: '/acl', upstream: env.ACL_URL },
    { prefix: '/v1', upstream: `${env.DECISION_URL}/v1` },
  ]);
  console.log(`[e2e] stack ready in ${Date.now() - started} ms; gateway ${gateway.url}`);
  const provided: E2eEnvironment = {
    gatewayUrl: gateway.url,
    kubeconfig: env.KUBECONFIG,
    kubectl: await kubectlBinary(),
    namespace: env.NAMESPACE,
    stateDir: stack?.stateDir ?? '',
  };
  project.provide('e2e', provided);
  return async () => {
    await gateway.close();
    await stack?.stop();
  };
}

// A stack elsewhere (kind) needs only kubectl from this machine: KUBECTL_BIN, or the pinned build.
async function kubectlBinary(): Promise<string> {
  return process.env.KUBECTL_BIN ?? (await resolveToolPaths()).kubectl;
}

async function startDevStack() {
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-e2e-'));
  const envFile = join(stateDir, 'env');
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot(), 'src/cmd/dev-stack.ts')], {
    cwd: repoRoot(),
    env: {
      ...withoutClusterVariables(process.env),
      DEV_STATE_DIR: stateDir,
      ACL_PORT: '0',
      DECISION_PORT: '0',
      CONTROLLER_PORT: '0',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitForFile(envFile, child, 180_000);
  return { stateDir, envFile, stop: () => stopChild(child) };
}

// The stack under test must be the local one, whatever the developer's shell points at.
function withoutClusterVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { KUBECONFIG: _kubeconfig, SPICEDB_ENDPOINT: _endpoint, SPICEDB_TOKEN: _token, ...rest } = env;
  return rest;
}

async function waitForFile(path: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (child.exitCode !== null) throw new Error(`the development stack exited with ${child.exitCode}`);
    if (Date.now() > deadline)
      throw new Error(`the development stack did not write ${path} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
