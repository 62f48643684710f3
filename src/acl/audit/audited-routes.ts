import express from 'express';
import type { ErrorRequestHandler, Request, Router } from 'express';
import type { Principal } from '../../auth/principal.js';
import { HttpError } from '../../http/errors.js';
import { pathParameterNames } from '../../http/openapi/route-paths.js';
import type {
  RouteAccess,
  RouteDefinition,
  RouteInput,
  RouteRequestSchemas,
  RouteResult,
} from '../../http/openapi/route-definition.js';
import type { ActionDescription, Auditor, Outcome } from './mutation-auditor.js';

/** What a refused or failed request attempted: a role refusal comes before the body is read, so it has none. */
export interface AttemptedInput {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body?: unknown;
  /**
   * Refused (403): its record may say only what the request named. Its actor reads it in GET /audit, so a fact
   * about the target (an item's organisation) would tell what the refusal withheld.
   */
  refused: boolean;
}

export interface MutationAudit<I> {
  /** The actions a request carried out: one record each. */
  completed(input: I, result: RouteResult): ActionDescription[];
  /** The actions a request attempted but was refused or failed. */
  attempted(input: AttemptedInput): ActionDescription[];
}

interface AuditedRoute {
  operationId: string;
  method: string;
  pattern: RegExp;
  paramNames: string[];
  audit: MutationAudit<never>;
}

/**
 * The mutating routes of the ACL API and their audit (docs/audit.md, "What is recorded"): each handler runs
 * between a probe of PostgreSQL and the storing of its records, so no answer leaves without its records;
 * refusals by role, which the router answers before any handler, are recorded by `refusalRecorder`.
 */
export class AuditedRoutes {
  private readonly routes: AuditedRoute[] = [];
  private readonly recorded = new WeakSet<object>();

  constructor(private readonly auditor: Auditor) {}

  wrap<R extends RouteRequestSchemas, A extends RouteAccess>(
    audit: MutationAudit<RouteInput<R, A>>,
    definition: RouteDefinition<R, A>,
  ): RouteDefinition<R, A> {
    this.routes.push({
      operationId: definition.operationId,
      method: definition.method.toUpperCase(),
      pattern: pathPattern(definition.path),
      paramNames: pathParameterNames(definition.path),
      audit: audit as MutationAudit<never>,
    });
    return { ...definition, handler: (input) => this.run(audit, definition.handler, input) };
  }

  /** The operationIds of the audited routes. */
  operationIds(): string[] {
    return this.routes.map((route) => route.operationId);
  }

  /** `router` with the refusals of audited routes by role recorded (mount it where `router` would be). */
  withRefusalsRecorded(router: Router): Router {
    const outer = express.Router();
    outer.use(router);
    outer.use(this.refusalRecorder());
    return outer;
  }

  private async run<R extends RouteRequestSchemas, A extends RouteAccess>(
    audit: MutationAudit<RouteInput<R, A>>,
    handler: RouteDefinition<R, A>['handler'],
    input: RouteInput<R, A>,
  ): Promise<RouteResult> {
    const principal = input.principal as Principal;
    await this.auditor.ensureAvailable();
    let result: RouteResult;
    try {
      result = await handler(input);
    } catch (error) {
      const outcome = error instanceof HttpError ? error : { status: 500, detail: 'internal error' };
      await this.auditor.record(
        principal,
        input.request.id,
        outcome,
        audit.attempted(attemptOf(input, outcome.status)),
        false,
      );
      if (error instanceof Error) this.recorded.add(error);
      throw error;
    }
    await this.auditor.record(
      principal,
      input.request.id,
      outcomeOf(result),
      audit.completed(input, result),
      true,
    );
    return result;
  }

  private refusalRecorder(): ErrorRequestHandler {
    return (error: unknown, req, _res, next) => {
      const route = this.refusedRoute(error, req);
      if (!route || !req.principal) {
        next(error);
        return;
      }
      const attempt = {
        params: paramsOf(route, req.path),
        query: req.query as Record<string, unknown>,
        refused: true,
      };
      this.auditor
        .record(req.principal, req.id, error as HttpError, route.audit.attempted(attempt), false)
        .then(() => next(error), next);
    };
  }

  private refusedRoute(error: unknown, req: Request): AuditedRoute | undefined {
    if (!(error instanceof HttpError) || error.status !== 403 || this.recorded.has(error)) return undefined;
    return this.routes.find((route) => route.method === req.method && route.pattern.test(req.path));
  }
}

/** The status, and the envelope's detail when it has one. */
function outcomeOf(result: RouteResult): Outcome {
  const detail = (result.body as { detail?: unknown } | undefined)?.detail;
  return { status: result.status, ...(typeof detail === 'string' ? { detail } : {}) };
}

function attemptOf(
  input: { params: unknown; query: unknown; body: unknown },
  status: number,
): AttemptedInput {
  return {
    params: (input.params ?? {}) as Record<string, string>,
    query: (input.query ?? {}) as Record<string, unknown>,
    body: input.body,
    refused: status === 403,
  };
}

function pathPattern(openApiPath: string): RegExp {
  const escaped = openApiPath
    .split(/\{[A-Za-z_][A-Za-z0-9_]*\}/)
    .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('([^/]+)')}/?$`);
}

function paramsOf(route: AuditedRoute, path: string): Record<string, string> {
  const values = route.pattern.exec(path)?.slice(1) ?? [];
  return Object.fromEntries(
    route.paramNames.map((name, index) => [name, decodeURIComponent(values[index] ?? '')]),
  );
}
