import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { ConfigError, parseControllerConfig } from '../controller/config.js';
import { startController } from '../controller/start-controller.js';

// The grant controller's entrypoint: `node dist/cmd/controller.js` (or `main.js controller`), configured by
// environment variables (docs/controller.md). The all-in-one development stack imports startController.
export { parseControllerConfig, startController };
export type { ControllerConfig } from '../controller/config.js';
export type { RunningController, StartControllerOptions } from '../controller/start-controller.js';

/** Starts the controller from the environment; SIGINT/SIGTERM stop it gracefully, a second one at once. */
export async function main(): Promise<void> {
  let config;
  try {
    config = parseControllerConfig(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(2);
  }
  const controller = await startController(config);
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    // A second signal means "now": as controller-runtime's signal handler.
    if (signals > 1) process.exit(1);
    process.stderr.write(`${signal}: stopping gracefully\n`);
    controller.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`shutdown failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

function isEntrypoint(): boolean {
  const script = process.argv[1];
  return script !== undefined && import.meta.url === pathToFileURL(realpathSync(script)).href;
}

if (isEntrypoint()) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `controller failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
