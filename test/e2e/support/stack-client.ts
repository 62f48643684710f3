import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { ensureDevSigningKey } from '../../../src/auth/dev-signing-key.js';
import { mintToken } from '../../../src/auth/dev-token.js';
import { repoRoot } from '../../../src/localplane/repo-root.js';
import { PATIENCE_MS } from '../../support/patience.js';
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

  return {
    /** The ACL API under the gateway's public prefix `/acl`. */
    acl: <T = Record<string, unknown>>(path: string, init: CallOptions) => call<T>(`/acl${path}`, init),

    check: (token: string, request: Record<string, string>) =>
      call<{ result: CheckResult }>('/v1/check', { method: 'POST', token, body: request }),

    /** A token from the development stack's identity provider (its signing key). */
    async token(sub: string, options: { roles?: string[]; org?: string } = {}): Promise<string> {
      const key = await ensureDevSigningKey(environment().stateDir || join(repoRoot(), '.dev'));
      return mintToken(key, {
        sub,
        ...(options.roles ? { roles: options.roles } : {}),
        ...(options.org ? { org: options.org } : {}),
      });
    },

    /** The decision service's metrics text. */
    decisionMetrics: async () => (await fetch(`${environment().decisionUrl}/metrics`)).text(),

    kubectl,

    kubectlJson: async <T>(...args: string[]): Promise<T> =>
      JSON.parse(await kubectl(...args, '-o', 'json')) as T,
  };
}

/** The stack the global setup started (or found). */
export const { acl, check, decisionMetrics, token, kubectl, kubectlJson } = stackClient(e2e);

/** Polls until `probe` returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = PATIENCE_MS,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
