import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { ensureDevSigningKey } from '../../../src/auth/dev-signing-key.js';
import { mintToken } from '../../../src/auth/dev-token.js';
import { repoRoot } from '../../../src/localplane/repo-root.js';
import { PATIENCE_MS } from '../../support/patience.js';

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

async function call<T>(
  path: string,
  init: { method?: string; token: string; body?: unknown; headers?: Record<string, string> },
) {
  const response = await fetch(`${e2e().gatewayUrl}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${init.token}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as T,
  } satisfies Reply<T>;
}

/** The ACL API under the gateway's public prefix `/acl`. */
export const acl = <T = Record<string, unknown>>(path: string, init: Parameters<typeof call>[1]) =>
  call<T>(`/acl${path}`, init);

export interface CheckResult {
  allowed: boolean;
  subject: unknown;
  object: unknown;
  relation: string;
}

export async function check(
  token: string,
  request: Record<string, string>,
): Promise<Reply<{ result: CheckResult }>> {
  return call('/v1/check', { method: 'POST', token, body: request });
}

/** A token from the development stack's identity provider (its signing key). */
export async function token(sub: string, options: { roles?: string[]; org?: string } = {}): Promise<string> {
  const key = await ensureDevSigningKey(e2e().stateDir || join(repoRoot(), '.dev'));
  return mintToken(key, {
    sub,
    ...(options.roles ? { roles: options.roles } : {}),
    ...(options.org ? { org: options.org } : {}),
  });
}

export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run(e2e().kubectl, ['--kubeconfig', e2e().kubeconfig, ...args]);
  return stdout;
}

export async function kubectlJson<T>(...args: string[]): Promise<T> {
  return JSON.parse(await kubectl(...args, '-o', 'json')) as T;
}

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
