import { parseControllerConfig } from '../controller/config.js';
import { startController } from '../controller/start-controller.js';
import { runIfEntrypoint, stopOnSignals } from './process-lifecycle.js';

// The grant controller: `node dist/cmd/controller.js` (or `main.js controller`), configured by environment
// variables (docs/controller.md). The all-in-one development stack imports startController.
export { parseControllerConfig, startController };
export type { ControllerConfig } from '../controller/config.js';
export type { RunningController, StartControllerOptions } from '../controller/start-controller.js';

export async function main(): Promise<void> {
  const controller = await startController(parseControllerConfig(process.env));
  stopOnSignals('controller', () => controller.stop());
}

runIfEntrypoint(import.meta.url, 'controller', main);
