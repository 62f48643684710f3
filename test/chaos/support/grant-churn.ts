import { randomInt, randomUUID } from 'node:crypto';
import type { PolicyGrantSpec } from '../../../src/api/v1alpha1/index.js';
import { delay } from '../../../src/localplane/managed-process.js';
import { individual, type Resources } from '../../integration/controller/support/harness.js';

export const ACCESS_TYPES = ['api', 'file', 'sub'] as const;

/** A grant whose access is withdrawn: revoked (spec.revokedAt) or deleted while it was still active. */
export interface WithdrawnGrant {
  name: string;
  how: 'revoked' | 'deleted';
  /** The spec that was withdrawn: its user must lose every access type on its item. */
  spec: PolicyGrantSpec;
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

/** Narrows or widens the access types, or moves the grant to another user or item. Users are never reused. */
function editedSpec(spec: PolicyGrantSpec, itemIds: readonly string[]): PolicyGrantSpec {
  const current = spec.constraints.access.map(({ accessType }) => accessType);
  const missing = ACCESS_TYPES.filter((accessType) => !current.includes(accessType));
  const withAccess = (access: string[]) => ({
    ...spec,
    constraints: { ...spec.constraints, access: access.map((accessType) => ({ accessType })) },
  });
  switch (randomInt(4)) {
    case 0:
      if (current.length > 1) return withAccess(current.filter((accessType) => accessType !== pick(current)));
      return withAccess([...current, pick(missing)]);
    case 1:
      if (missing.length > 0) return withAccess([...current, pick(missing)]);
      return withAccess(current.slice(1));
    case 2:
      return { ...spec, userId: randomUUID() };
    default:
      return { ...spec, itemId: pick(itemIds.filter((itemId) => itemId !== spec.itemId)) };
  }
}

/**
 * Creates, edits, revokes and deletes PolicyGrants directly with the Kubernetes API, a bounded population,
 * and remembers what it withdrew. One operation per grant at a time.
 */
export class GrantChurn {
  readonly counts: Record<Operation, number> = { create: 0, edit: 0, revoke: 0, delete: 0 };
  /** Grant name → withdrawn spec, for the revocation checker. */
  readonly withdrawn = new Map<string, WithdrawnGrant>();
  private readonly active = new Map<string, PolicyGrantSpec>();
  private readonly revoked = new Set<string>();
  private readonly busy = new Set<string>();

  constructor(
    private readonly resources: Resources,
    private readonly namespace: string,
    private readonly itemIds: readonly string[],
    private readonly limits: ChurnLimits,
  ) {}

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
        await delay(intervalMs);
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
    const name = pick(candidates.filter((candidate) => !this.busy.has(candidate)));
    if (name === undefined) return;
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

  private async create(): Promise<void> {
    const spec = individual(pick(this.itemIds), [pick(ACCESS_TYPES)]);
    const { name } = await this.resources.createGrant(this.namespace, spec);
    this.active.set(name, spec);
    this.counts.create += 1;
  }

  private async edit(name: string): Promise<void> {
    const grant = await this.resources.updateGrantSpec(this.namespace, name, (spec) =>
      editedSpec(spec, this.itemIds),
    );
    this.active.set(name, grant.spec);
  }

  private async revoke(name: string): Promise<void> {
    const grant = await this.resources.revoke(this.namespace, name);
    this.active.delete(name);
    this.revoked.add(name);
    this.withdrawn.set(name, {
      name,
      how: 'revoked',
      spec: grant.spec,
      generation: grant.metadata.generation,
    });
  }

  private async delete(name: string): Promise<void> {
    await this.resources.deleteGrant(this.namespace, name);
    const spec = this.active.get(name);
    if (spec) this.withdrawn.set(name, { name, how: 'deleted', spec });
    this.active.delete(name);
    this.revoked.delete(name);
  }
}
