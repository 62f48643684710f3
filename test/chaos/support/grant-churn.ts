import { randomInt } from 'node:crypto';
import type { PolicyGrantSpec } from '../../../src/api/v1alpha1/index.js';
import { sleep } from '../../../dev/wait/sleep.js';
import { individual, type Resources } from '../../integration/controller/support/harness.js';

export const ACCESS_TYPES = ['api', 'file', 'sub'] as const;

/** One access a grant gave at some generation: its user, on its item, of one access type. */
export interface GrantedAccess {
  itemType: string;
  itemId: string;
  userId: string;
  accessType: string;
}

/** A grant whose access is withdrawn: revoked (spec.revokedAt) or deleted while it was still active. */
export interface WithdrawnGrant {
  name: string;
  how: 'revoked' | 'deleted';
  /** Every access any of its generations gave: none may remain (users are never shared between grants). */
  accesses: GrantedAccess[];
  /** The generation that set revokedAt (revoked grants only). */
  generation?: number;
}

export interface ChurnLimits {
  /** Grants created in all (seed included). */
  maxCreated: number;
  /** Grants that are neither revoked nor deleted, at most. */
  maxActive: number;
}

type Operation = 'create' | 'edit' | 'revoke' | 'delete';

/** Weights of the operations: mostly edits, creates ahead of revokes and deletes so the population lives on. */
const OPERATIONS: readonly [Operation, number][] = [
  ['create', 25],
  ['edit', 55],
  ['revoke', 12],
  ['delete', 8],
];

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)] as T;

function pickOperation(): Operation {
  let roll = randomInt(100);
  for (const [operation, weight] of OPERATIONS) {
    if (roll < weight) return operation;
    roll -= weight;
  }
  return 'edit';
}

export function describeSpec(spec: PolicyGrantSpec): string {
  const access = spec.constraints.access.map(({ accessType }) => accessType).join(',');
  return `user ${spec.userId} item ${spec.itemId} [${access}]`;
}

/** Narrows or widens the access types, or moves the grant to another user or item. Users are never reused. */
function editedSpec(spec: PolicyGrantSpec): PolicyGrantSpec {
  const current = spec.constraints.access.map(({ accessType }) => accessType);
  const missing = ACCESS_TYPES.filter((accessType) => !current.includes(accessType));
  const withAccess = (access: string[]) => ({
    ...spec,
    constraints: { ...spec.constraints, access: access.map((accessType) => ({ accessType })) },
  });
  const dropped = pick(current);
  // The subject, item and policy type are immutable (the CRD's transition rules): edits narrow or widen the
  // access types, or move the expiry.
  switch (randomInt(3)) {
    case 0:
      if (current.length > 1) return withAccess(current.filter((accessType) => accessType !== dropped));
      return withAccess([...current, pick(missing)]);
    case 1:
      if (missing.length > 0) return withAccess([...current, pick(missing)]);
      return withAccess(current.slice(1));
    default:
      return { ...spec, expiryTime: new Date(Date.now() + (1 + randomInt(30)) * 86_400_000).toISOString() };
  }
}

/**
 * Creates, edits, revokes and deletes PolicyGrants directly with the Kubernetes API, a bounded population,
 * and remembers what it withdrew. One operation per grant at a time.
 */
export class GrantChurn {
  readonly counts: Record<Operation, number> = { create: 0, edit: 0, revoke: 0, delete: 0 };
  /** Grant name → what was withdrawn, for the revocation checker. */
  readonly withdrawn = new Map<string, WithdrawnGrant>();
  /** User → the grant that has (or had) it: users are never shared, so a user names one grant. */
  private readonly grantOfUser = new Map<string, string>();
  /** Grant → what was done to it and when (generation after the write), for the account of a failure. */
  private readonly histories = new Map<string, string[]>();
  private readonly accessesEver = new Map<string, Map<string, GrantedAccess>>();
  private readonly active = new Map<string, PolicyGrantSpec>();
  private readonly revoked = new Set<string>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly resources: Resources,
    private readonly namespace: string,
    private readonly itemIds: readonly string[],
    private readonly limits: ChurnLimits,
  ) {}

  grantWithUser(userId: string): string | undefined {
    return this.grantOfUser.get(userId);
  }

  historyOf(name: string): string[] {
    return this.histories.get(name) ?? [];
  }

  private record(name: string, what: string, generation?: number): void {
    const entry = `${new Date().toISOString()} ${what}${generation ? ` (generation ${generation})` : ''}`;
    this.histories.set(name, [...this.historyOf(name), entry]);
  }

  get created(): number {
    return this.counts.create;
  }

  async seed(count: number): Promise<void> {
    for (let i = 0; i < count; i += 1) await this.create();
  }

  /** `workers` loops, each one operation every `intervalMs`, while `shouldContinue()`. */
  async run(shouldContinue: () => boolean, workers: number, intervalMs: number): Promise<void> {
    const worker = async () => {
      while (shouldContinue()) {
        await this.step(pickOperation());
        await sleep(intervalMs);
      }
    };
    await Promise.all(Array.from({ length: workers }, worker));
  }

  private async step(operation: Operation): Promise<void> {
    if (operation === 'create') {
      if (this.created < this.limits.maxCreated && this.active.size < this.limits.maxActive)
        await this.create();
      return;
    }
    const candidates = [
      ...(operation === 'delete' ? [...this.active.keys(), ...this.revoked] : this.active.keys()),
    ];
    const free = candidates.filter((candidate) => !this.busy.has(candidate));
    if (free.length === 0) return; // every grant is busy with another worker's operation, or none is left
    const name = pick(free);
    this.busy.add(name);
    try {
      if (operation === 'edit') await this.edit(name);
      if (operation === 'revoke') await this.revoke(name);
      if (operation === 'delete') await this.delete(name);
      this.counts[operation] += 1;
    } finally {
      this.busy.delete(name);
    }
  }

  /** Counted before the request, so that two workers never both take the last create of the budget. */
  private async create(): Promise<void> {
    this.counts.create += 1;
    const spec = individual(pick(this.itemIds), [pick(ACCESS_TYPES)]);
    const { name } = await this.resources.createGrant(this.namespace, spec);
    this.remember(name, spec);
    this.record(name, `created ${describeSpec(spec)}`, 1);
  }

  private async edit(name: string): Promise<void> {
    const grant = await this.resources.updateGrantSpec(this.namespace, name, (spec) => editedSpec(spec));
    this.remember(name, grant.spec);
    this.record(name, `edited to ${describeSpec(grant.spec)}`, grant.metadata.generation);
  }

  private remember(name: string, spec: PolicyGrantSpec): void {
    this.active.set(name, spec);
    this.grantOfUser.set(spec.userId as string, name);
    const accesses = this.accessesEver.get(name) ?? new Map<string, GrantedAccess>();
    for (const { accessType } of spec.constraints.access) {
      const access = {
        itemType: spec.itemType,
        itemId: spec.itemId,
        userId: spec.userId as string,
        accessType,
      };
      accesses.set(JSON.stringify(access), access);
    }
    this.accessesEver.set(name, accesses);
  }

  private withdraw(name: string, how: WithdrawnGrant['how'], generation?: number): void {
    const accesses = [...(this.accessesEver.get(name)?.values() ?? [])];
    this.withdrawn.set(name, { name, how, accesses, ...(generation ? { generation } : {}) });
  }

  private async revoke(name: string): Promise<void> {
    const grant = await this.resources.revoke(this.namespace, name);
    this.active.delete(name);
    this.revoked.add(name);
    this.withdraw(name, 'revoked', grant.metadata.generation);
    this.record(name, 'revoked', grant.metadata.generation);
  }

  private async delete(name: string): Promise<void> {
    await this.resources.deleteGrant(this.namespace, name);
    this.record(name, 'deleted');
    if (this.active.has(name)) this.withdraw(name, 'deleted');
    this.active.delete(name);
    this.revoked.delete(name);
  }
}
