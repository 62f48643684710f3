import { resolve } from 'node:path';
import { startDevStack } from '../stack/dev-stack.js';
import { tourText } from '../stack/tour.js';
import { runIfEntrypoint, stopOnSignals, thenFlushTraces } from '../../src/cmd/process-lifecycle.js';
import { startTracingFromEnvironment } from '../../src/cmd/tracing-setup.js';

// `npm start`: the whole system on this machine until Ctrl-C. DEV_STATE_DIR moves `.dev/` (the tests do).
async function main(): Promise<void> {
  const stateDir = resolve(process.env.DEV_STATE_DIR ?? '.dev');
  const log = (message: string) => process.stderr.write(`[dev-stack] ${message}\n`);
  // One TracerProvider for the three services of this process (docs/observability.md), off unless OTEL_* say.
  const tracing = await startTracingFromEnvironment('policy-grant-operator-dev');
  const stack = await startDevStack({ stateDir, env: process.env, log });
  stopOnSignals(
    'dev-stack',
    thenFlushTraces(() => stack.stop(), tracing),
  );
  const { env, aclDocsUrl, sampleItem: item } = stack;
  process.stdout.write(`\n${tourText({ env, stateDir, aclDocsUrl, item })}\n`);
}

runIfEntrypoint(import.meta.url, 'dev-stack', main);
