import { PLATFORM_SEARCH_CLIENT_ROLE, SEARCH_CLIENT_ROLE } from '../../src/decision/check-callers.js';

/** DEV_DECISION_REPLICAS: how many decision services the stack runs, each with its own barrier and cache. */
export function decisionReplicaCount(env: NodeJS.ProcessEnv): number {
  const count = Number(env.DEV_DECISION_REPLICAS ?? 1);
  if (!Number.isInteger(count) || count < 1 || count > 9) {
    throw new Error(
      `DEV_DECISION_REPLICAS must be a whole number from 1 to 9, not "${env.DEV_DECISION_REPLICAS}"`,
    );
  }
  return count;
}

/** Signs the development stack's search page tokens (every process of the stack the same): never in production. */
const DEV_PAGE_TOKEN_KEY = 'development-stack-page-token-key-not-for-production';

/**
 * The development stack's searchers: `search_client` within its organisations, `platform_search_client` across
 * them (`npm run token -- --role …`), and a page token key shared by its processes; each can be overridden.
 */
export function devSearchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    DECISION_SEARCH_ROLES: env.DECISION_SEARCH_ROLES ?? SEARCH_CLIENT_ROLE,
    DECISION_SEARCH_PLATFORM_ROLES: env.DECISION_SEARCH_PLATFORM_ROLES ?? PLATFORM_SEARCH_CLIENT_ROLE,
    PAGE_TOKEN_KEYS: env.PAGE_TOKEN_KEYS ?? DEV_PAGE_TOKEN_KEY,
  };
}
