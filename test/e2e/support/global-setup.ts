import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { resolveToolPaths } from '../../../dev/localplane/tool-paths.js';
import { parseStateFile, type DevStackEnv } from '../../../dev/stack/state-file.js';
import {
  assertNoProcessLeft,
  spawnDevStack,
  waitUntilReady,
  type DevStackProcess,
} from './dev-stack-process.js';
import { startGateway } from './gateway.js';
import type { E2eEnvironment } from './e2e-environment.js';

/**
 * The end-to-end suite drives a running stack only from outside. By default it starts one exactly as a
 * developer does (`npm start`'s entrypoint, in a temporary state folder, on free ports); E2E_ENV_FILE
 * points it at a stack that is already running instead (e.g. `.dev/env`, or hack/kind-e2e.sh's).
 */
export default stackSetup();

/** The global setup, with `stackEnv` added to the environment of the stack it starts. */
export function stackSetup(stackEnv: NodeJS.ProcessEnv = {}) {
  return (project: TestProject) => setup(project, stackEnv);
}

async function setup(project: TestProject, stackEnv: NodeJS.ProcessEnv) {
  const started = Date.now();
  const stack = process.env.E2E_ENV_FILE ? undefined : await startDevStack(stackEnv);
  const env =
    stack?.env ?? (parseStateFile(await readFile(process.env.E2E_ENV_FILE as string, 'utf8')) as DevStackEnv);
  const gateway = await startGateway([
    { prefix: '/acl', upstream: env.ACL_URL },
    { prefix: '/v1', upstream: `${env.DECISION_URL}/v1` },
  ]);
  console.log(`[e2e] stack ready in ${Date.now() - started} ms; gateway ${gateway.url}`);
  const provided: E2eEnvironment = {
    gatewayUrl: gateway.url,
    aclUrl: env.ACL_URL,
    decisionUrl: env.DECISION_URL,
    controllerUrl: env.CONTROLLER_URL,
    kubeconfig: env.KUBECONFIG,
    kubectl: await kubectlBinary(),
    namespace: env.NAMESPACE,
    stateDir: stack?.process.stateDir ?? '',
  };
  project.provide('e2e', provided);
  return async () => {
    await gateway.close();
    if (stack) await stopAndCheck(stack.process);
  };
}

// A stack elsewhere (kind) needs only kubectl from this machine: KUBECTL_BIN, or the pinned build.
async function kubectlBinary(): Promise<string> {
  return process.env.KUBECTL_BIN ?? (await resolveToolPaths()).kubectl;
}

async function startDevStack(
  stackEnv: NodeJS.ProcessEnv,
): Promise<{ process: DevStackProcess; env: DevStackEnv }> {
  const stateDir = await mkdtemp(join(tmpdir(), 'policy-grant-e2e-'));
  const startedAt = Date.now();
  const stack = spawnDevStack(stateDir, 0, stackEnv);
  console.log(`[e2e] development stack in ${stateDir} (log: ${stack.process.logFile})`);
  try {
    return { process: stack, env: await waitUntilReady(stack, startedAt) };
  } catch (error) {
    await stopAndCheck(stack);
    throw error;
  }
}

/** Ctrl-C, as a developer stops it; then nothing the stack started may still run. */
async function stopAndCheck(stack: DevStackProcess): Promise<void> {
  const exit = await stack.signal('SIGINT');
  await assertNoProcessLeft(stack);
  if (exit !== 0)
    throw new Error(`the development stack exited with ${exit} when stopped; see ${stack.process.logFile}`);
}
