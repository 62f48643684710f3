import { decisionConfigFromEnvironment } from '../decision/decision-config.js';
import { startDecisionService } from '../decision/decision-service.js';
import { runIfEntrypoint, serve } from './process-lifecycle.js';

// The decision service: `node dist/cmd/decision-service.js` (or `main.js decision-service`), configured by
// environment variables (docs/decision-service.md).
export function main(): Promise<void> {
  return serve({
    name: 'decision-service',
    configFromEnvironment: decisionConfigFromEnvironment,
    start: (config) => startDecisionService(config),
  });
}

runIfEntrypoint(import.meta.url, 'decision-service', main);
