import { describe, expect, it } from 'vitest';
import type { CheckResult } from '../../../src/decision/canonical-check.js';
import { ownedBy, scopedEvaluator } from '../../../src/decision/organisation-scope.js';
import { canonicalCheck } from '../../../src/decision/canonical-check.js';
import type { CanonicalCheck } from '../../../src/decision/canonical-check.js';
import { loadRegistry } from '../../../src/spicedb/registry.js';

const registry = loadRegistry();
const check = (item: string) =>
  canonicalCheck(registry, {
    subject: { type: 'user', id: 'consumer' },
    resource: { type: 'DATABANK', id: item },
    relation: 'api',
  });

/** An evaluator that allows every check of a pair, and an item's ownership by its organisation in `owners`. */
function evaluator(owners: Record<string, string>) {
  const asked: CanonicalCheck[] = [];
  const evaluate = (asking: CanonicalCheck): Promise<CheckResult> => {
    asked.push(asking);
    const allowed = asking.relation === 'owner' ? owners[asking.object.id] === asking.subject.id : true;
    return Promise.resolve({ ...asking, allowed });
  };
  return { evaluate: scopedEvaluator(evaluate), asked };
}

describe('scopedEvaluator', () => {
  const owners = { 'urn:x:ours': 'org-1', 'urn:x:theirs': 'org-2' };

  it('denies an item outside the scope, whatever SpiceDB allows', async () => {
    const { evaluate } = evaluator(owners);
    const scope = new Set(['org-1']);
    expect((await evaluate(check('urn:x:ours'), undefined, scope)).allowed).toBe(true);
    expect((await evaluate(check('urn:x:theirs'), undefined, scope)).allowed).toBe(false);
    expect((await evaluate(check('urn:x:nobodys'), undefined, scope)).allowed).toBe(false);
    expect((await evaluate(check('urn:x:theirs'), undefined, new Set(['org-1', 'org-2']))).allowed).toBe(
      true,
    );
  });

  it('asks no ownership for a platform-wide caller', async () => {
    const { evaluate, asked } = evaluator(owners);
    expect((await evaluate(check('urn:x:theirs'), undefined, 'every')).allowed).toBe(true);
    expect(asked.map((asking) => asking.relation)).toEqual(['api']);
  });

  it("asks the item's owner relationship to the organisation, as the controller projects it", () => {
    expect(ownedBy(check('urn:x:ours'), 'org-1').spicedb).toEqual({
      resourceType: 'resource',
      resourceId: check('urn:x:ours').spicedb.resourceId,
      permission: 'owner',
      subjectType: 'organization',
      subjectId: 'org-1',
    });
  });
});
