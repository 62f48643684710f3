import { z } from 'zod';
import { authSettingsFromEnvironment } from '../config/auth-config.js';
import { commonEnvironment } from '../config/common-config.js';
import { decisionClientRoles } from '../config/decision-clients.js';
import { booleanFlag, commaList, duration, port, readEnvironment } from '../config/environment.js';
import { drainMs, shutdownEnvironment } from '../config/shutdown-config.js';
import { spicedbEnvironment, spicedbSettings } from '../config/spicedb-config.js';
import { decisionRequestLimits } from '../config/rate-limit-config.js';
import { DEFAULT_TOKEN_REVIEW_BOUND } from './bounded-token-reviews.js';
import { DEFAULT_CHECK_BATCH } from './check-batcher.js';
import { DEFAULT_DECISION_CACHE } from './decision-cache.js';
import {
  DEFAULT_CHECK_TIMEOUT_MS,
  DEFAULT_DECISION_PORT,
  DEFAULT_TOKEN_REVIEW_AUDIENCE,
  DEFAULT_SERVICE_ACCOUNT_ISSUER,
} from './decision-service.js';
import type { DecisionServiceConfig } from './decision-service.js';
import { DEFAULT_REVISION_BARRIER } from './revision-barrier.js';
import { MIN_PAGE_TOKEN_KEY_BYTES } from './authzen/page-token.js';

const serviceAccountName = z
  .string()
  .regex(
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/,
    'each entry is <namespace>:<name> of a ServiceAccount',
  );

const nonEmptyList = (what: string) => commaList.pipe(z.array(z.string()).min(1, `at least ${what}`));

/**
 * An AuthZEN decision point identifier: no query or fragment (AuthZEN), and a path of plain characters only, as
 * its metadata is served at a route of that path.
 */
const decisionPointUrl = z.url().refine((value) => {
  const url = new URL(value);
  return url.search === '' && url.hash === '' && /^[A-Za-z0-9._~%/-]*$/.test(url.pathname);
}, 'a URL without query or fragment, its path of letters, digits, "-", ".", "_", "~", "/" and %-escapes');

/** Variables of the decision service beyond the common, SpiceDB and authentication ones. */
export const decisionEnvironment = z
  .object({
    DECISION_HOST: z.string().min(1).default('0.0.0.0'),
    DECISION_PORT: port.default(DEFAULT_DECISION_PORT),
    /** Deadline of every SpiceDB check, e.g. `2s` or `500ms`. */
    CHECK_TIMEOUT: duration.default(DEFAULT_CHECK_TIMEOUT_MS),
    /** Also accept Kubernetes ServiceAccount tokens, verified by TokenReview (KUBECONFIG or in-cluster). */
    TOKEN_REVIEW: booleanFlag.default(false),
    /** Audiences ServiceAccount tokens must be issued for (comma-separated); at least one, by default the service's own. */
    TOKEN_REVIEW_AUDIENCES: nonEmptyList('an audience').default([DEFAULT_TOKEN_REVIEW_AUDIENCE]),
    /** The API server's --service-account-issuer(s): bearer tokens of other issuers get no TokenReview. */
    TOKEN_REVIEW_ISSUERS: commaList.default([DEFAULT_SERVICE_ACCOUNT_ISSUER]),
    /** TokenReviews in flight at once, and waiting; past both, 503. */
    TOKEN_REVIEW_CONCURRENCY: z.coerce.number().int().min(1).default(DEFAULT_TOKEN_REVIEW_BOUND.concurrency),
    TOKEN_REVIEW_QUEUE: z.coerce.number().int().min(0).default(DEFAULT_TOKEN_REVIEW_BOUND.queue),
    /** Roles (JWT roles claim, Basic application `roles`) that make a caller an enforcement point. */
    DECISION_CLIENT_ROLES: decisionClientRoles,
    /** ServiceAccounts that may check, as `<namespace>:<name>` (comma-separated); needs TOKEN_REVIEW. */
    DECISION_CLIENT_SERVICE_ACCOUNTS: commaList.pipe(z.array(serviceAccountName)).default([]),
    /** Roles that may search within the organisations their caller is bound to; none by default. */
    DECISION_SEARCH_ROLES: commaList.default([]),
    /** Roles that may search every organisation (a platform-wide enforcement point); none by default. */
    DECISION_SEARCH_PLATFORM_ROLES: commaList.default([]),
    /** ServiceAccounts that may search every organisation, `<namespace>:<name>`; needs TOKEN_REVIEW. */
    DECISION_SEARCH_SERVICE_ACCOUNTS: commaList.pipe(z.array(serviceAccountName)).default([]),
    /** Keys of the page tokens (comma-separated, the first signs), each at least 32 characters. */
    PAGE_TOKEN_KEYS: commaList
      .pipe(
        z.array(
          z
            .string()
            .min(MIN_PAGE_TOKEN_KEY_BYTES, `each key has at least ${MIN_PAGE_TOKEN_KEY_BYTES} characters`),
        ),
      )
      .default([]),
    /** The public base URL of the decision point behind a gateway: its AuthZEN identifier and metadata. */
    DECISION_PUBLIC_URL: decisionPointUrl.optional(),
    /** SpiceDB's --datastore-revision-quantization-interval: set both to the same value. */
    SPICEDB_QUANTIZATION_INTERVAL: duration.default(DEFAULT_REVISION_BARRIER.quantizationMs),
    /** Added to the quantization interval: how long a change counts as recent for the revision barrier. */
    REVISION_BARRIER_MARGIN: duration.default(DEFAULT_REVISION_BARRIER.marginMs),
    /** Bound on the objects and revisions the barrier remembers; past it every check counts as touched. */
    REVISION_BARRIER_MAX_ENTRIES: z.coerce.number().int().min(1).default(DEFAULT_REVISION_BARRIER.maxEntries),
    /** Trust the Watch (and answer from memory) only while SpiceDB answered on its connection within this long. */
    REVISION_BARRIER_LIVENESS: duration.default(DEFAULT_REVISION_BARRIER.livenessMs),
    /** Remember decisions until the Watch shows a change that touches them (docs: "Decision cache"). */
    DECISION_CACHE: booleanFlag.default(DEFAULT_DECISION_CACHE.enabled),
    DECISION_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).default(DEFAULT_DECISION_CACHE.maxEntries),
    /** Longest an allow is remembered (a change on the Watch or an expiry on its item ends it sooner). */
    DECISION_CACHE_ALLOW_TTL: duration.default(DEFAULT_DECISION_CACHE.allowTtlMs),
    DECISION_CACHE_DENY_TTL: duration.default(DEFAULT_DECISION_CACHE.denyTtlMs),
    /** Send checks that arrive together as one CheckBulkPermissions (docs: "Batching"). */
    CHECK_BATCHING: booleanFlag.default(DEFAULT_CHECK_BATCH.enabled),
    /** Most checks in one CheckBulkPermissions call. */
    CHECK_BATCH_MAX: z.coerce.number().int().min(1).default(DEFAULT_CHECK_BATCH.maxItems),
    /** Most SpiceDB calls of the check path in flight; checks arriving while all are busy go out together. */
    CHECK_BATCH_CONCURRENCY: z.coerce.number().int().min(1).default(DEFAULT_CHECK_BATCH.concurrency),
  })
  .refine((env) => env.TOKEN_REVIEW || env.DECISION_CLIENT_SERVICE_ACCOUNTS.length === 0, {
    message: 'ServiceAccounts can only call with TOKEN_REVIEW=true',
    path: ['DECISION_CLIENT_SERVICE_ACCOUNTS'],
  })
  .refine((env) => env.TOKEN_REVIEW || env.DECISION_SEARCH_SERVICE_ACCOUNTS.length === 0, {
    message: 'ServiceAccounts can only call with TOKEN_REVIEW=true',
    path: ['DECISION_SEARCH_SERVICE_ACCOUNTS'],
  });

/**
 * The decision service's configuration from environment variables (docs/decision-service.md): data, the live
 * parts are startDecisionService's.
 */
export function decisionConfigFromEnvironment(env: NodeJS.ProcessEnv = process.env): DecisionServiceConfig {
  const common = readEnvironment(commonEnvironment, env);
  const spicedb = readEnvironment(spicedbEnvironment, env);
  const auth = authSettingsFromEnvironment(env);
  const decision = readEnvironment(decisionEnvironment, env);
  const shutdown = readEnvironment(shutdownEnvironment, env);
  return {
    host: decision.DECISION_HOST,
    port: decision.DECISION_PORT,
    spicedb: spicedbSettings(spicedb),
    checkTimeoutMs: decision.CHECK_TIMEOUT,
    drainMs: drainMs(shutdown),
    auth,
    limits: decisionRequestLimits(env),
    ...(common.TRUST_PROXY === undefined ? {} : { trustProxy: common.TRUST_PROXY }),
    ...(decision.DECISION_PUBLIC_URL === undefined ? {} : { publicUrl: decision.DECISION_PUBLIC_URL }),
    checkCallers: {
      roles: decision.DECISION_CLIENT_ROLES,
      serviceAccounts: decision.DECISION_CLIENT_SERVICE_ACCOUNTS,
    },
    searchCallers: {
      roles: decision.DECISION_SEARCH_ROLES,
      platformRoles: decision.DECISION_SEARCH_PLATFORM_ROLES,
      platformServiceAccounts: decision.DECISION_SEARCH_SERVICE_ACCOUNTS,
    },
    pageTokenKeys: decision.PAGE_TOKEN_KEYS.map((key) => Buffer.from(key, 'utf8')),
    ...(decision.TOKEN_REVIEW
      ? {
          tokenReview: {
            jwtIssuers: [auth.issuer],
            audiences: decision.TOKEN_REVIEW_AUDIENCES,
            issuers: decision.TOKEN_REVIEW_ISSUERS,
            bound: { concurrency: decision.TOKEN_REVIEW_CONCURRENCY, queue: decision.TOKEN_REVIEW_QUEUE },
          },
        }
      : {}),
    revisionBarrier: {
      quantizationMs: decision.SPICEDB_QUANTIZATION_INTERVAL,
      marginMs: decision.REVISION_BARRIER_MARGIN,
      maxEntries: decision.REVISION_BARRIER_MAX_ENTRIES,
      livenessMs: decision.REVISION_BARRIER_LIVENESS,
    },
    decisionCache: {
      enabled: decision.DECISION_CACHE,
      maxEntries: decision.DECISION_CACHE_MAX_ENTRIES,
      allowTtlMs: decision.DECISION_CACHE_ALLOW_TTL,
      denyTtlMs: decision.DECISION_CACHE_DENY_TTL,
    },
    checkBatch: {
      enabled: decision.CHECK_BATCHING,
      maxItems: decision.CHECK_BATCH_MAX,
      concurrency: decision.CHECK_BATCH_CONCURRENCY,
    },
    ...(common.KUBECONFIG ? { kubeconfigPath: common.KUBECONFIG } : {}),
    errorNamespace: common.ERROR_NAMESPACE,
    logLevel: common.LOG_LEVEL,
  };
}
