import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { collectionPath, isNotFound, objectPath } from '../../../../src/kube/index.js';
import {
  CATALOG_ITEM_KIND,
  CATALOG_ITEM_RESOURCE,
  GRANT_CLAIM_RESOURCE,
  GROUP_VERSION,
  MEMBERSHIP_KIND,
  MEMBERSHIP_RESOURCE,
  membershipName,
  POLICY_GRANT_KIND,
  POLICY_GRANT_RESOURCE,
  type ResourceDescriptor,
  type CatalogItemSpec,
  type GrantClaim,
  type Membership,
  type MembershipKey,
  type PolicyGrant,
  type PolicyGrantSpec,
} from '../../../../src/api/v1alpha1/index.js';
import { ensureDevSigningKey, type DevSigningKey } from '../../../../dev/tokens/dev-signing-key.js';
import { DEV_TOKEN_AUDIENCE, DEV_TOKEN_ISSUER, mintToken } from '../../../../dev/tokens/dev-token.js';
import { hashSecret } from '../../../../src/auth/secret-hash.js';
import type { AclApiConfig } from '../../../../src/acl/acl-config.js';
import { startAclApi, type RunningAclApi, type StartAclApiOptions } from '../../../../src/acl/acl-server.js';
import {
  controlPlane,
  createTestNamespace,
  testKubeClient,
  testKubeConfig,
  uniqueId,
} from '../../support/cluster.js';
import { testAuditConfig } from '../../support/database.js';
import { until } from '../../../../dev/wait/until.js';

// One ACL API per test file, in-process on an ephemeral port, writing into its own namespace, with a dev
// signing key and a Basic credential in a temp folder; helpers for catalog items, tokens and requests.

export const BASIC_CLIENT_ID = 'gateway-app';
/** A second application, whose credential carries the role event_producer for PRODUCER_ORGANISATIONS. */
export const PRODUCER_CLIENT_ID = 'membership-feed';
/** The organisations the application PRODUCER_CLIENT_ID reports memberships for. */
export const PRODUCER_ORGANISATIONS = [randomUUID(), randomUUID()];
/** An enforcement point: its credential carries the role decision_client. */
export const ENFORCER_CLIENT_ID = 'enforcement-point';
export const BASIC_SECRET = 'correct horse battery staple';
/** Cheapest scrypt the parser accepts: the tests check the Basic path, not the hash's cost. */
const FAST_SCRYPT = { cost: 2 ** 10, blockSize: 8, parallelization: 1 };

export interface HttpAnswer<T = Record<string, unknown>> {
  status: number;
  body: T;
  headers: Headers;
}

export interface Caller {
  id: string;
  authorization: string;
}

export class AclHarness {
  readonly kubeConfig: KubeConfig = testKubeConfig();
  readonly kube = testKubeClient();
  api!: RunningAclApi;
  namespace!: string;
  key!: DevSigningKey;
  private tempDir!: string;
  /** The audit store of the API (a database of its own on the shared PostgreSQL server). */
  audit: AclApiConfig['audit'] | undefined;
  private readonly itemNames: string[] = [];

  /**
   * Starts the API in a namespace of its own, or in `overrides.namespace` (a controller's ACL namespace); `options`
   * brings live parts of the test's own (a registry, a kubeconfig).
   */
  async start(
    prefix: string,
    overrides: Partial<AclApiConfig> = {},
    options: StartAclApiOptions = {},
  ): Promise<this> {
    this.namespace = overrides.namespace ?? (await createTestNamespace(prefix));
    this.tempDir = await mkdtemp(join(tmpdir(), 'acl-test-'));
    this.key = await ensureDevSigningKey(join(this.tempDir, 'keys'));
    this.api = await startAclApi(await this.config(overrides), { validateResponses: true, ...options });
    return this;
  }

  async config(overrides: Partial<AclApiConfig> = {}): Promise<AclApiConfig> {
    const credentialsDir = join(this.tempDir, 'basic');
    await mkdir(credentialsDir, { recursive: true });
    const hash = await hashSecret(BASIC_SECRET, FAST_SCRYPT);
    await writeFile(join(credentialsDir, BASIC_CLIENT_ID), JSON.stringify({ hash, roles: [] }));
    await writeFile(
      join(credentialsDir, ENFORCER_CLIENT_ID),
      JSON.stringify({ hash, roles: ['decision_client'] }),
    );
    await writeFile(
      join(credentialsDir, PRODUCER_CLIENT_ID),
      JSON.stringify({ hash, roles: ['event_producer'], organisations: PRODUCER_ORGANISATIONS }),
    );
    return {
      port: 0,
      host: '127.0.0.1',
      basePath: '/v2',
      namespace: this.namespace,
      errorNamespace: 'dx',
      logLevel: process.env.ACL_TEST_LOG_LEVEL ?? 'silent',
      kubeconfigPath: controlPlane().kubeconfigPath,
      auth: {
        jwks: { file: this.key.jwksPath },
        issuer: DEV_TOKEN_ISSUER,
        audience: DEV_TOKEN_AUDIENCE,
        algorithms: ['ES256'],
        basicCredentialsDir: credentialsDir,
      },
      closeGraceMs: 1_000,
      audit: (this.audit ??= await testAuditConfig('acl')),
      ...overrides,
    };
  }

  async stop(): Promise<void> {
    await this.api?.stop();
    await Promise.allSettled(
      this.itemNames.map((name) =>
        this.kube.call({ method: 'DELETE', path: objectPath(CATALOG_ITEM_RESOURCE, { name }) }),
      ),
    );
    if (this.tempDir) await rm(this.tempDir, { recursive: true, force: true });
  }

  /** A user with a bearer token: roles and organisation claim as given. */
  async user(options: { roles?: string[]; org?: string; id?: string } = {}): Promise<Caller> {
    const id = options.id ?? randomUUID();
    const token = await mintToken(this.key, {
      sub: id,
      roles: options.roles ?? [],
      ...(options.org ? { org: options.org } : {}),
    });
    return { id, authorization: `Bearer ${token}` };
  }

  basicCaller(secret = BASIC_SECRET, clientId = BASIC_CLIENT_ID): Caller {
    return {
      id: clientId,
      authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
    };
  }

  /** The harness's kubeconfig with the apiserver reached through `port` on loopback (a relay a test can cut). */
  kubeConfigVia(port: number): KubeConfig {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('no cluster');
    const server = new URL(cluster.server);
    server.port = String(port);
    const copy = new KubeConfig();
    copy.loadFromOptions({
      clusters: this.kubeConfig.clusters.map((c) =>
        c.name === cluster.name ? { ...c, server: server.toString() } : c,
      ),
      users: this.kubeConfig.users,
      contexts: this.kubeConfig.contexts,
      currentContext: this.kubeConfig.currentContext,
    });
    return copy;
  }

  /** The Membership of `key` as the apiserver has it, or undefined. */
  async getMembership(key: MembershipKey): Promise<Membership | undefined> {
    return this.getObject<Membership>(MEMBERSHIP_RESOURCE, membershipName(key));
  }

  /** The GrantClaim `name` in the API's namespace, or undefined. */
  async getClaim(name: string): Promise<GrantClaim | undefined> {
    return this.getObject<GrantClaim>(GRANT_CLAIM_RESOURCE, name);
  }

  async listClaims(): Promise<GrantClaim[]> {
    const list = await this.kube.call<{ items: GrantClaim[] }>({
      method: 'GET',
      path: collectionPath(GRANT_CLAIM_RESOURCE, this.namespace),
    });
    return list.items;
  }

  async deleteClaim(name: string): Promise<void> {
    await this.kube.call({
      method: 'DELETE',
      path: objectPath(GRANT_CLAIM_RESOURCE, { namespace: this.namespace, name }),
    });
  }

  private async getObject<T>(resource: ResourceDescriptor, name: string): Promise<T | undefined> {
    try {
      return await this.kube.call<T>({
        method: 'GET',
        path: objectPath(resource, { namespace: this.namespace, name }),
      });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  /** A CatalogItem with a fresh itemId (cluster-scoped, deleted by stop()); waits until the API's cache has it. */
  async catalogItem(spec: Partial<CatalogItemSpec> & Pick<CatalogItemSpec, 'ownerId' | 'organisationId'>) {
    const name = uniqueId('item');
    const full: CatalogItemSpec = {
      itemId: `urn:dx:item:${name}`,
      itemType: 'DATABANK',
      accessTypes: ['api', 'file', 'sub'],
      ...spec,
    };
    await this.kube.call({
      method: 'POST',
      path: collectionPath(CATALOG_ITEM_RESOURCE),
      body: { apiVersion: GROUP_VERSION, kind: CATALOG_ITEM_KIND, metadata: { name }, spec: full },
    });
    this.itemNames.push(name);
    await until(() => this.api.cache.itemsWithId(full.itemId).length > 0, `item ${full.itemId} cached`);
    return { name, spec: full };
  }

  /** A PolicyGrant written straight to the apiserver (as kubectl would), bypassing the API's checks. */
  async rawGrant(spec: PolicyGrantSpec, namespace = this.namespace): Promise<PolicyGrant> {
    return this.kube.call<PolicyGrant>({
      method: 'POST',
      path: collectionPath(POLICY_GRANT_RESOURCE, namespace),
      body: { apiVersion: GROUP_VERSION, kind: POLICY_GRANT_KIND, metadata: { generateName: 'raw-' }, spec },
    });
  }

  async getGrant(name: string, namespace = this.namespace): Promise<PolicyGrant> {
    return this.kube.call<PolicyGrant>({
      method: 'GET',
      path: objectPath(POLICY_GRANT_RESOURCE, { namespace, name }),
    });
  }

  async listGrants(namespace = this.namespace): Promise<PolicyGrant[]> {
    const list = await this.kube.call<{ items: PolicyGrant[] }>({
      method: 'GET',
      path: collectionPath(POLICY_GRANT_RESOURCE, namespace),
    });
    return list.items;
  }

  /**
   * Makes `userId` a member of `organisationId`: a Membership in the API's namespace, written straight to the
   * apiserver; waits until the API's cache has it.
   */
  async addMember(organisationId: string, userId: string): Promise<void> {
    const spec = { organisationId, userId };
    await this.kube.call({
      method: 'POST',
      path: collectionPath(MEMBERSHIP_RESOURCE, this.namespace),
      body: {
        apiVersion: GROUP_VERSION,
        kind: MEMBERSHIP_KIND,
        metadata: { name: membershipName(spec) },
        spec,
      },
    });
    await until(() => this.api.cache.isOrganisationMember(organisationId, userId), `member ${userId} cached`);
  }

  async request<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: { caller?: Caller; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
  ): Promise<HttpAnswer<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.caller) headers.authorization = options.caller.authorization;
    let payload: string | undefined = options.rawBody;
    if (options.body !== undefined) payload = JSON.stringify(options.body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    const base =
      path.startsWith('/healthz') || path === '/metrics' || path === '/docs'
        ? this.api.rootUrl
        : this.api.url;
    const response = await fetch(`${base}${path}`, { method, headers, body: payload });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON (metrics)
    }
    return { status: response.status, body: body as T, headers: response.headers };
  }
}

export { until };

export function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().replace(/\.\d+Z$/, 'Z');
}

export function individual(
  itemId: string,
  userId: string,
  accessTypes: string[] = ['api'],
  expiryTime = inDays(30),
) {
  return {
    policyType: 'INDIVIDUAL',
    userId,
    itemId,
    itemType: 'DATABANK',
    expiryTime,
    constraints: { access: accessTypes.map((accessType) => ({ accessType })) },
  };
}

export function group(itemId: string, orgIds: string[], accessTypes: string[] = ['api']) {
  return {
    policyType: 'GROUP',
    itemId,
    itemType: 'DATABANK',
    expiryTime: inDays(30),
    constraints: {
      access: accessTypes.map((accessType) => ({ accessType })),
      subjects: { allowedOrgIds: orgIds },
    },
  };
}
