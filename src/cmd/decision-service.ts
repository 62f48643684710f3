import { decisionConfigFromEnvironment } from '../decision/decision-config.js';
import { startDecisionService } from '../decision/decision-service.js';
import { runIfEntrypoint, stopOnSignals } from './process-lifecycle.js';

// The decision service: `node dist/cmd/decision-service.js` (or `main.js decision-service`), configured by
// environment variables (docs/decision-service.md). The all-in-one development stack imports it.
export { startDecisionService, decisionConfigFromEnvironment };
export type { DecisionServiceConfig, RunningDecisionService } from '../decision/decision-service.js';

export async function main(): Promise<void> {
  const service = await startDecisionService(await decisionConfigFromEnvironment());
  stopOnSignals('decision-service', () => service.stop());
}

runIfEntrypoint(import.meta.url, 'decision-service', main);
