import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { RunningTracing } from '../observability/tracing-sdk.js';
import { startTracingFromEnvironment } from './tracing-setup.js';

/** A service as its entrypoint runs it: how it reads its configuration (data), and how it starts from it. */
export interface ServiceDefinition<Config> {
  /** Names the process in traces and in its messages. */
  name: string;
  configFromEnvironment(env: NodeJS.ProcessEnv): Config;
  /** Builds the service's parts from the configuration and starts them; resolves once it serves. */
  start(config: Config): Promise<{ stop(): Promise<void> }>;
}

/**
 * A service's life as a process, the same for each (kubebuilder's main.go): the configuration from the
 * environment, so that a bad setting fails before anything starts; tracing; the service; then SIGINT or SIGTERM
 * stops it gracefully and flushes the traces.
 */
export async function serve<Config>(
  service: ServiceDefinition<Config>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const config = service.configFromEnvironment(env);
  const tracing = await startTracingFromEnvironment(service.name, env);
  const running = await service.start(config);
  stopOnSignals(
    service.name,
    thenFlushTraces(() => running.stop(), tracing),
  );
}

/** True when the module at `moduleUrl` is the script node was started with (not imported). */
export function isEntrypoint(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return moduleUrl === pathToFileURL(realpathSync(script)).href;
  } catch {
    return false;
  }
}

/** Runs `main` when the module is the started script; a start failure prints its message and exits 1. */
export function runIfEntrypoint(moduleUrl: string, name: string, main: () => Promise<void>): void {
  if (!isEntrypoint(moduleUrl)) return;
  main().catch((error: unknown) => {
    // A configuration error's message names the variable; anything else deserves its stack.
    const text =
      error instanceof Error
        ? error.name.startsWith('Config')
          ? error.message
          : (error.stack ?? error.message)
        : String(error);
    process.stderr.write(`${name}: ${text}\n`);
    process.exit(1);
  });
}

/**
 * SIGINT/SIGTERM stop gracefully (in-flight work finishes) and exit 0; a second signal exits at once, as
 * controller-runtime's signal handler does.
 */
export function stopOnSignals(name: string, stop: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`${name}: ${signal}, stopping\n`);
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`${name}: stop failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** `stop`, then the export of the spans still buffered (the stop's own spans included). */
export function thenFlushTraces(
  stop: () => Promise<void>,
  tracing: RunningTracing | undefined,
): () => Promise<void> {
  return async () => {
    try {
      await stop();
    } finally {
      await tracing?.shutdown();
    }
  };
}
