import { controllerConfigFromEnvironment } from '../controller/controller-config.js';
import { startController } from '../controller/start-controller.js';
import { runIfEntrypoint, serve } from './process-lifecycle.js';

// The grant controller: `node dist/cmd/controller.js` (or `main.js controller`), configured by environment
// variables (docs/controller.md).
export function main(): Promise<void> {
  return serve({
    name: 'controller',
    configFromEnvironment: controllerConfigFromEnvironment,
    start: (config) =>
      startController(
        config,
        config.leaderElection.exitOnLoss ? { onLeadershipLost: exitOnLostLeadership } : {},
      ),
  });
}

/** As controller-runtime: a replica that lost leadership exits, and starts afresh (Kubernetes restarts it). */
function exitOnLostLeadership(): never {
  process.stderr.write(
    'controller: leadership lost; exiting (EXIT_ON_LOST_LEADERSHIP=false campaigns again)\n',
  );
  process.exit(1);
}

runIfEntrypoint(import.meta.url, 'controller', main);
