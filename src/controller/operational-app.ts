import express from 'express';
import type { Express } from 'express';
import type { Registry } from 'prom-client';
import { successEnvelope } from '../http/envelope.js';
import { HttpError, problemBody } from '../http/errors.js';
import { OPERATIONAL_PATHS } from '../http/operational-routes.js';
import { runReadinessChecks, type ReadinessCheck } from '../http/readiness.js';
import { createUrnScheme } from '../http/urn.js';
import type { Logger } from '../observability/logger.js';

export interface OperationalAppOptions {
  metricsRegistry: Registry;
  readinessChecks: readonly ReadinessCheck[];
  /** Reported by readiness. A replica that does not lead is still ready: it takes over when the leader goes. */
  leadership: () => { leader: boolean; identity: string | undefined };
  logger: Logger;
}

const urn = createUrnScheme('controller');

/**
 * The controller's operational endpoints: it serves no API, so not the services' whole HTTP stack (auth,
 * OpenAPI), only liveness, readiness (the shared checks and envelope, plus whether this replica leads) and
 * metrics.
 */
export function operationalApp(options: OperationalAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get(OPERATIONAL_PATHS.live, (_request, response) => {
    response.json(successEnvelope(urn, { title: 'Live' }));
  });
  app.get(OPERATIONAL_PATHS.ready, async (_request, response) => {
    const outcomes = await runReadinessChecks(options.readinessChecks);
    const failed = outcomes.filter((outcome) => outcome.status !== 'ok');
    const results = outcomes.map(({ name, status, durationMs }) => ({ name, status, durationMs }));
    const leadership = options.leadership();
    if (failed.length === 0) {
      response.json({ ...successEnvelope(urn, { title: 'Ready', results }), ...leadership });
      return;
    }
    // Why a check failed is logged, not answered: the endpoint is unauthenticated.
    options.logger.warn({ checks: failed }, 'not ready');
    const names = failed.map(
      (outcome) => `${outcome.name} (${outcome.status === 'timeout' ? 'timed out' : 'failed'})`,
    );
    const detail = `not ready: ${names.join(', ')}`;
    const problem = problemBody(urn, new HttpError('DependencyUnavailable', detail));
    response.status(503).json({ ...problem, results, ...leadership });
  });
  app.get(OPERATIONAL_PATHS.metrics, async (_request, response) => {
    response.type(options.metricsRegistry.contentType).send(await options.metricsRegistry.metrics());
  });
  return app;
}
