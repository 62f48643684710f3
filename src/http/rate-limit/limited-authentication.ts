import type { Registry as MetricsRegistry } from 'prom-client';
import type { AnyRouteDefinition, ApiAuthentication } from '../openapi/route-definition.js';
import type { UrnScheme } from '../urn.js';
import { limitFailedAuthentication } from './failed-authentication-limit.js';
import { rateLimitedRequests } from './rate-limit-metrics.js';
import type { RequestLimits } from './request-limits.js';
import { subjectRateLimit } from './subject-rate-limit.js';

export interface LimitedAuthenticationOptions {
  urn: UrnScheme;
  metricsRegistry: MetricsRegistry;
  limits: RequestLimits;
  /** The class a route's requests count against, e.g. `read` or `write`. */
  classify: (route: AnyRouteDefinition) => string;
}

/**
 * Authentication with the service's limits: failed authentications per client address before it, and after
 * it the per-subject limit of the route's class. Routes of one class share one counter per subject.
 */
export function limitedAuthentication(
  authentication: ApiAuthentication,
  { urn, metricsRegistry, limits, classify }: LimitedAuthenticationOptions,
): ApiAuthentication {
  const limited = rateLimitedRequests(metricsRegistry);
  const limiters = new Map(
    Object.entries(limits.perSubject).flatMap(([name, limit]) =>
      limit ? [[name, subjectRateLimit({ urn, name, limit, limited })] as const] : [],
    ),
  );
  const failed = limits.failedAuthentication;
  return {
    ...authentication,
    middleware: failed
      ? limitFailedAuthentication(authentication.middleware, { urn, limit: failed, limited })
      : authentication.middleware,
    subjectLimit: (route) => limiters.get(classify(route)),
  };
}
