import { randomUUID } from 'node:crypto';
import { GROUP_VERSION, POLICY_GRANT_KIND, type PolicyGrant } from '../../../../src/api/v1alpha1/index.js';
import { claimObject, type ClaimData, type StoredClaim } from '../../../../src/acl/policies/grant-claims.js';
import type { CreateStore } from '../../../../src/acl/policies/create-policies.js';
import type { NewGrant } from '../../../../src/acl/policies/grant-store.js';
import { KubeApiError } from '../../../../src/kube/index.js';

export const NAMESPACE = 'policy-grant-system';

export type StoreOperation = keyof CreateStore;

export interface StoreCall {
  op: StoreOperation;
  name: string;
  /** The claim data written (claim writes only). */
  data?: ClaimData;
}

/**
 * The apiserver as a create sees it, in memory, with its rules: names are unique (409 AlreadyExists),
 * updates and deletes are conditioned on resourceVersion or uid (409), missing objects are 404. Every call
 * first awaits `before`, which a test sets to reorder calls, change the cluster in between, or fail them.
 */
export class FakeGrantStore implements CreateStore {
  readonly claims = new Map<string, StoredClaim>();
  readonly grants = new Map<string, PolicyGrant>();
  readonly calls: StoreCall[] = [];
  before: (call: StoreCall) => Promise<void> | void = () => undefined;
  private version = 0;

  /** Writes a claim as another replica would, bypassing `before`. */
  putClaim(name: string, data: ClaimData): StoredClaim {
    const claim = claimObject(name, data, String(++this.version)) as StoredClaim;
    this.claims.set(name, claim);
    return claim;
  }

  claimData(name: string): Partial<ClaimData> | undefined {
    return this.claims.get(name)?.spec;
  }

  async createClaim(name: string, data: ClaimData): Promise<StoredClaim> {
    await this.enter({ op: 'createClaim', name, data });
    if (this.claims.has(name)) throw alreadyExists(name);
    return structuredClone(this.putClaim(name, data));
  }

  async getClaim(name: string): Promise<StoredClaim | undefined> {
    await this.enter({ op: 'getClaim', name });
    const claim = this.claims.get(name);
    return claim && structuredClone(claim);
  }

  async replaceClaim(name: string, data: ClaimData, resourceVersion: string): Promise<StoredClaim> {
    await this.enter({ op: 'replaceClaim', name, data });
    this.checkClaim(name, resourceVersion);
    return structuredClone(this.putClaim(name, data));
  }

  async deleteClaim(name: string, resourceVersion: string): Promise<void> {
    await this.enter({ op: 'deleteClaim', name });
    this.checkClaim(name, resourceVersion);
    this.claims.delete(name);
  }

  async createGrant(grant: NewGrant): Promise<PolicyGrant> {
    await this.enter({ op: 'createGrant', name: grant.name });
    if (this.grants.has(grant.name)) throw alreadyExists(grant.name);
    const created: PolicyGrant = {
      apiVersion: GROUP_VERSION,
      kind: POLICY_GRANT_KIND,
      metadata: {
        name: grant.name,
        namespace: NAMESPACE,
        uid: randomUUID(),
        generation: 1,
        resourceVersion: String(++this.version),
        labels: grant.labels,
        annotations: grant.annotations,
      },
      spec: grant.spec,
    };
    this.grants.set(grant.name, created);
    return structuredClone(created);
  }

  async getGrant(name: string): Promise<PolicyGrant | undefined> {
    await this.enter({ op: 'getGrant', name });
    const grant = this.grants.get(name);
    return grant && structuredClone(grant);
  }

  async deleteGrant(name: string, uid: string): Promise<void> {
    await this.enter({ op: 'deleteGrant', name });
    const grant = this.grants.get(name);
    if (!grant) throw notFound(name);
    if (grant.metadata.uid !== uid) throw preconditionFailed(name);
    this.grants.delete(name);
  }

  callsOf(op: StoreOperation): StoreCall[] {
    return this.calls.filter((call) => call.op === op);
  }

  private async enter(call: StoreCall): Promise<void> {
    this.calls.push(call);
    await this.before(call);
  }

  private checkClaim(name: string, resourceVersion: string): void {
    const claim = this.claims.get(name);
    if (!claim) throw notFound(name);
    if (claim.metadata.resourceVersion !== resourceVersion) throw preconditionFailed(name);
  }
}

const alreadyExists = (name: string) => new KubeApiError(409, 'AlreadyExists', `${name} already exists`);
const notFound = (name: string) => new KubeApiError(404, 'NotFound', `${name} not found`);
const preconditionFailed = (name: string) =>
  new KubeApiError(409, 'Conflict', `Operation cannot be fulfilled on ${name}: the object has been modified`);
