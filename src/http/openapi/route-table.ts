import type { Router } from 'express';
import type {
  AnyRouteDefinition,
  ApiAuthentication,
  OpenApiDocument,
  RouteAccess,
  RouteDefinition,
  RouteRequestSchemas,
} from './route-definition.js';
import { hotRoute } from './hot-route.js';
import type { HotRoute } from './hot-route.js';
import { buildOpenApiDocument } from './route-document.js';
import type { DocumentConfig } from './route-document.js';
import { pathParameterNames } from './route-paths.js';
import { buildRouter } from './route-router.js';

export interface RouteTableOptions {
  authentication?: ApiAuthentication;
  /** Largest accepted JSON body (bytes or `'1mb'`). */
  bodyLimit?: string | number;
  /** Check every handler result against its declaration; for tests and development. */
  validateResponses?: boolean;
}

export interface DeclaredRoute {
  method: string;
  path: string;
  operationId: string;
}

/**
 * Each route is declared once: the same declaration mounts the express handler (with zod validation of
 * body, query, headers and path parameters) and describes the operation in the OpenAPI document.
 */
export class RouteTable {
  private readonly definitions: AnyRouteDefinition[] = [];

  constructor(private readonly options: RouteTableOptions = {}) {}

  add<R extends RouteRequestSchemas, A extends RouteAccess>(definition: RouteDefinition<R, A>): this {
    // Stored with its input type erased; buildRouter hands each handler the parts its own schemas produced.
    const route = definition as unknown as AnyRouteDefinition;
    this.checkDeclaration(route);
    this.definitions.push(route);
    return this;
  }

  routes(): DeclaredRoute[] {
    return this.definitions.map(({ method, path, operationId }) => ({
      method: method.toUpperCase(),
      path,
      operationId,
    }));
  }

  router(): Router {
    return buildRouter(this.definitions, this.options);
  }

  /** The route `operationId` as a hot route, served before the app's router; the table is at the root. */
  hotRoute(operationId: string): HotRoute {
    const definition = this.definitions.find((route) => route.operationId === operationId);
    if (!definition) throw new Error(`no route ${operationId} is declared`);
    return hotRoute(definition, this.options);
  }

  /** `rootRoutes`: routes mounted at the service root beside these (the operational ones, and others). */
  document(config: DocumentConfig, ...rootRoutes: RouteTable[]): OpenApiDocument {
    return buildOpenApiDocument(
      this.definitions,
      config,
      this.options.authentication,
      rootRoutes.flatMap((routes) => routes.definitions),
    );
  }

  private checkDeclaration(route: AnyRouteDefinition): void {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    if (this.definitions.some((other) => other.operationId === route.operationId)) {
      throw new Error(`${name}: operationId ${route.operationId} is already declared`);
    }
    if (this.definitions.some((other) => other.method === route.method && other.path === route.path)) {
      throw new Error(`${name} is already declared`);
    }
    if (route.request?.body && route.request.bodies)
      throw new Error(`${name}: declare body or bodies, not both`);
    if (route.access !== 'public' && !this.options.authentication) {
      throw new Error(`${name} needs authentication, but the route table has none`);
    }
    const declaredParams = Object.keys(route.request?.params?.shape ?? {}).sort();
    if (pathParameterNames(route.path).sort().join() !== declaredParams.join()) {
      throw new Error(`${name}: path parameters and the params schema disagree`);
    }
    const upperCaseHeader = Object.keys(route.request?.headers?.shape ?? {}).find(
      (key) => key !== key.toLowerCase(),
    );
    if (upperCaseHeader) throw new Error(`${name}: header ${upperCaseHeader} must be declared in lower case`);
  }
}
