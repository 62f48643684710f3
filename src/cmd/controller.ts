import { parseControllerConfig } from '../controller/config.js';
import { startController } from '../controller/start-controller.js';
import { startTracingFromEnvironment } from './tracing-setup.js';
import { runIfEntrypoint, stopOnSignals, thenFlushTraces } from './process-lifecycle.js';

// The grant controller: `node dist/cmd/controller.js` (or `main.js controller`), configured by environment
// variables (docs/controller.md). The all-in-one development stack imports startController.
export { parseControllerConfig, startController };
export type { ControllerConfig } from '../controller/config.js';
export type { RunningController, StartControllerOptions } from '../controller/start-controller.js';

export async function main(): Promise<void> {
  const config = parseControllerConfig(process.env);
  const tracing = await startTracingFromEnvironment('controller');
  const controller = await startController(
    config,
    config.leaderElection.exitOnLoss ? { onLeadershipLost: exitOnLostLeadership } : {},
  );
  stopOnSignals(
    'controller',
    thenFlushTraces(() => controller.stop(), tracing),
  );
}

/** As controller-runtime: a replica that lost leadership exits, and starts afresh (Kubernetes restarts it). */
function exitOnLostLeadership(): never {
  process.stderr.write(
    'controller: leadership lost; exiting (EXIT_ON_LOST_LEADERSHIP=false campaigns again)\n',
  );
  process.exit(1);
}

runIfEntrypoint(import.meta.url, 'controller', main);
