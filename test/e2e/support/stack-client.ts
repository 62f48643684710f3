import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, inject } from 'vitest';
import type { CatalogItem } from '../../../src/api/v1alpha1/index.js';
import { ensureDevSigningKey } from '../../../dev/tokens/dev-signing-key.js';
import { mintToken } from '../../../dev/tokens/dev-token.js';
import { DECISION_CLIENT_ROLE } from '../../../src/config/decision-clients.js';
import { repoRoot } from '../../../dev/localplane/repo-root.js';
import { POLL_TIMEOUT_MS, until } from '../../../dev/wait/until.js';
import type { E2eEnvironment } from './e2e-environment.js';

const run = promisify(execFile);

/** A REST client behind the gateway, a kubectl user, and the identity provider: what the suite drives. */
export function e2e() {
  return inject('e2e');
}

export interface Reply<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

export interface CheckResult {
  allowed: boolean;
  subject: unknown;
  object: unknown;
  relation: string;
}

interface CallOptions {
  method?: string;
  token: string;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A client of the stack that `environment` describes (read at each call, so it may be injected lazily). */
export function stackClient(environment: () => E2eEnvironment) {
  async function call<T>(path: string, init: CallOptions): Promise<Reply<T>> {
    const response = await fetch(`${environment().gatewayUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${init.token}`,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...init.headers,
      },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as T };
  }

  async function kubectl(...args: string[]): Promise<string> {
    const { kubectl: binary, kubeconfig } = environment();
    const { stdout } = await run(binary, ['--kubeconfig', kubeconfig, ...args]);
    return stdout;
  }

  const kubectlJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await kubectl(...args, '-o', 'json')) as T;

  /** A token from the development stack's identity provider (its signing key). */
  async function token(sub: string, options: { roles?: string[]; org?: string } = {}): Promise<string> {
    const key = await ensureDevSigningKey(environment().stateDir || join(repoRoot(), '.dev'));
    return mintToken(key, {
      sub,
      ...(options.roles ? { roles: options.roles } : {}),
      ...(options.org ? { org: options.org } : {}),
    });
  }

  const check = (token: string, request: Record<string, string>) =>
    call<{ result: CheckResult }>('/v1/check', { method: 'POST', token, body: request });

  /** The first of the sample CatalogItems the stack created. */
  async function sampleItem(): Promise<CatalogItem['spec']> {
    const items = await kubectlJson<{ items: CatalogItem[] }>('get', 'catalogitems');
    return (items.items[0] as CatalogItem).spec;
  }

  return {
    /** The ACL API under the gateway's public prefix `/acl`. */
    acl: <T = Record<string, unknown>>(path: string, init: CallOptions) => call<T>(`/acl${path}`, init),

    check,

    /** Whether /v1/check, asked by `checkerToken` without a consistency token, allows the user. */
    async userAllowed(checkerToken: string, userId: string, itemId: string, relation = 'api') {
      return (await check(checkerToken, userCheckRequest(userId, itemId, relation))).body.result.allowed;
    },

    token,

    sampleItem,

    /** The sample item, a token of its owner (who grants on it) and one of an enforcement point (who checks). */
    async sampleItemParties(): Promise<SampleItemParties> {
      const item = await sampleItem();
      return {
        item,
        owner: await token(item.ownerId),
        checker: await token(randomUUID(), { roles: [DECISION_CLIENT_ROLE] }),
      };
    },

    /** The decision service's metrics text. */
    decisionMetrics: async () => (await fetch(`${environment().decisionUrl}/metrics`)).text(),

    kubectl,

    kubectlJson,
  };
}

export interface SampleItemParties {
  item: CatalogItem['spec'];
  /** The item owner's token. */
  owner: string;
  /** A decision_client's token: only they may call /v1/check. */
  checker: string;
}

/** The /v1/check body asking whether a user has `relation` on the item. */
export function userCheckRequest(userId: string, itemId: string, relation = 'api'): Record<string, string> {
  return {
    subject_type: 'user',
    subject_id: userId,
    organisation_id: '',
    resource_type: 'resource',
    resource_id: itemId,
    relation,
  };
}

/** The stack the global setup started (or found). */
export const {
  acl,
  check,
  userAllowed,
  decisionMetrics,
  token,
  sampleItem,
  sampleItemParties,
  kubectl,
  kubectlJson,
} = stackClient(e2e);

/**
 * The sample item's parties for the tests of one file: registers the beforeAll that fetches them and returns the
 * object it fills in, so read its fields in tests and hooks, not when the file loads.
 */
export function sampleItemPartiesForFile(): SampleItemParties {
  const parties = {} as SampleItemParties;
  beforeAll(async () => {
    Object.assign(parties, await sampleItemParties());
  });
  return parties;
}

/** Polls until `probe` returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = POLL_TIMEOUT_MS,
): Promise<T> {
  let value: T | undefined;
  await until(async () => (value = await probe()) !== undefined, what, timeoutMs, 200);
  return value as T;
}
