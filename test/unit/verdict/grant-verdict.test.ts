import { describe, expect, it } from 'vitest';
import {
  evaluateGrant,
  GrantReason,
  isOlder,
  WITHHELD_REASONS,
  type GrantVerdict,
} from '../../../src/verdict/grant-verdict.js';
import {
  boundNamespace,
  catalogItem,
  groupFields,
  ITEM_ID,
  NOW,
  ORG_A,
  ORG_B,
  OTHER_USER,
  policyGrant,
  testCluster,
  USER,
} from '../controller/support/fakes.js';

/** The controller's view over grants cached as it caches them (compact records). */
function viewOf(content?: Parameters<typeof testCluster>[0]) {
  return testCluster(content).cluster;
}

function reasonOf(verdict: GrantVerdict): string {
  return verdict.enforce ? GrantReason.Projected : verdict.reason;
}

describe('the verdict on one grant', () => {
  it('enforces an active grant in the ACL namespace on an existing item that allows its access types', () => {
    const grant = policyGrant('g');
    const verdict = evaluateGrant(grant, viewOf({ grants: [grant] }), NOW);
    expect(verdict).toMatchObject({
      enforce: true,
      relationships: [expect.objectContaining({ relation: 'api_consumer' })],
    });
  });

  it('withdraws revoked, expired and deleted grants, saying when and by whom', () => {
    const view = viewOf();
    const revoked = evaluateGrant(
      policyGrant('r', { revokedAt: '2026-05-01T00:00:00Z', revokedBy: OTHER_USER }),
      view,
      NOW,
    );
    expect(revoked).toEqual({
      enforce: false,
      reason: 'Revoked',
      message: `revoked at 2026-05-01T00:00:00Z by ${OTHER_USER}`,
    });
    const expired = evaluateGrant(policyGrant('e', { expiryTime: '2026-06-01T12:00:00Z' }), view, NOW);
    expect(expired).toEqual({
      enforce: false,
      reason: 'Expired',
      message: 'expired at 2026-06-01T12:00:00Z',
    });
    const deleting = evaluateGrant(policyGrant('d', {}, { deletionTimestamp: NOW }), view, NOW);
    expect(deleting).toMatchObject({
      enforce: false,
      reason: 'Revoked',
      message: 'the grant is being deleted',
    });
  });

  it('reports a missing, an ambiguous and a mistyped item as ItemNotFound, each with its own message', () => {
    const grant = policyGrant('g');
    expect(evaluateGrant(grant, viewOf({ items: [] }), NOW)).toEqual({
      enforce: false,
      reason: 'ItemNotFound',
      message: `no CatalogItem has itemId "${ITEM_ID}"`,
    });
    const twins = viewOf({ items: [catalogItem('b-item'), catalogItem('a-item')] });
    expect(evaluateGrant(grant, twins, NOW)).toMatchObject({
      reason: 'ItemNotFound',
      message: expect.stringContaining('is ambiguous: CatalogItems a-item, b-item all have it'),
    });
    const mistyped = viewOf({ items: [catalogItem('x', { itemType: 'DATASET' })] });
    expect(evaluateGrant(grant, mistyped, NOW)).toMatchObject({
      reason: 'ItemNotFound',
      message: expect.stringContaining('itemType DATASET, not DATABANK'),
    });
  });

  it("authorises by namespace: the ACL namespace, or one bound to the item's organisation", () => {
    const inTeam = policyGrant('g', {}, { namespace: 'team' });
    expect(reasonOf(evaluateGrant(inTeam, viewOf(), NOW))).toBe('NotAuthorized');
    const boundRight = viewOf({ namespaces: [boundNamespace('team', ORG_A)] });
    expect(reasonOf(evaluateGrant(inTeam, boundRight, NOW))).toBe('Projected');
    const boundWrong = viewOf({ namespaces: [boundNamespace('team', ORG_B)] });
    expect(reasonOf(evaluateGrant(inTeam, boundWrong, NOW))).toBe('NotAuthorized');
  });

  it('refuses access types the item does not allow, naming them and the allowed ones', () => {
    const view = viewOf({ items: [catalogItem('weather', { accessTypes: ['file'] })] });
    const grant = policyGrant('g', {
      constraints: { access: [{ accessType: 'api' }, { accessType: 'sub' }, { accessType: 'file' }] },
    });
    expect(evaluateGrant(grant, view, NOW)).toEqual({
      enforce: false,
      reason: 'AccessTypeNotAllowed',
      message: 'CatalogItem weather does not allow access type "api", "sub" (allowed: file)',
    });
  });

  it('refuses an access type the item allows but the registry cannot project', () => {
    const view = viewOf({ items: [catalogItem('weather', { accessTypes: ['api', 'telepathy'] })] });
    const grant = policyGrant('g', { constraints: { access: [{ accessType: 'telepathy' }] } });
    expect(evaluateGrant(grant, view, NOW)).toMatchObject({
      reason: 'AccessTypeNotAllowed',
      message: expect.stringContaining('registry'),
    });
  });

  it('refuses an item type the registry cannot project as ItemNotFound', () => {
    const view = viewOf({ items: [catalogItem('odd', { itemType: 'HOLOGRAM' })] });
    expect(evaluateGrant(policyGrant('g', { itemType: 'HOLOGRAM' }), view, NOW)).toMatchObject({
      enforce: false,
      reason: 'ItemNotFound',
      message: 'item type "HOLOGRAM" has no SpiceDB object type in the registry',
    });
  });

  it('refuses a grant without subjects, or with ids SpiceDB cannot hold, as ProjectionFailed', () => {
    const view = viewOf();
    const noOrganisations = policyGrant('g', {
      policyType: 'GROUP',
      userId: undefined,
      constraints: { access: [{ accessType: 'api' }], subjects: { allowedOrgIds: [] } },
    });
    expect(evaluateGrant(noOrganisations, view, NOW)).toMatchObject({
      reason: 'ProjectionFailed',
      message: 'a GROUP grant needs constraints.subjects.allowedOrgIds',
    });
    const hugeUser = policyGrant('h', { userId: 'u'.repeat(2_000) });
    expect(evaluateGrant(hugeUser, view, NOW)).toMatchObject({
      reason: 'ProjectionFailed',
      message: expect.stringContaining('subject id'),
    });
  });

  it('checks the state before anything else: a revoked grant on a missing item is Revoked', () => {
    const grant = policyGrant('g', { revokedAt: '2026-05-01T00:00:00Z' });
    expect(reasonOf(evaluateGrant(grant, viewOf({ items: [] }), NOW))).toBe('Revoked');
  });
});

describe('conflicts between grants that project the same tuple', () => {
  const at = (seconds: number) => ({
    creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, seconds)).toISOString() as unknown as Date,
  });

  it('gives Conflict to the newer grant, naming the older one and the tuple', () => {
    const older = policyGrant('older', {}, at(1));
    const newer = policyGrant('newer', {}, at(2));
    const view = viewOf({ grants: [newer, older] });
    expect(reasonOf(evaluateGrant(older, view, NOW))).toBe('Projected');
    expect(evaluateGrant(newer, view, NOW)).toEqual({
      enforce: false,
      reason: 'Conflict',
      message: expect.stringMatching(
        /^the older grant policy-grant-system\/older \(policy uid-older\) already gives the same access: resource:/,
      ),
    });
  });

  it('orders grants created in the same second by name, then namespace', () => {
    expect(isOlder(policyGrant('a', {}, at(1)), policyGrant('b', {}, at(1)))).toBe(true);
    expect(isOlder(policyGrant('b', {}, at(1)), policyGrant('a', {}, at(1)))).toBe(false);
    expect(
      isOlder(
        policyGrant('a', {}, { ...at(1), namespace: 'x' }),
        policyGrant('a', {}, { ...at(1), namespace: 'y' }),
      ),
    ).toBe(true);
    expect(isOlder(policyGrant('z', {}, at(1)), policyGrant('a', {}, at(2)))).toBe(true);
  });

  it('counts overlap on any one tuple: a GROUP grant sharing one organisation conflicts', () => {
    const older = policyGrant('older', groupFields([ORG_A]), at(1));
    const newer = policyGrant('newer', groupFields([ORG_B, ORG_A]), at(2));
    expect(reasonOf(evaluateGrant(newer, viewOf({ grants: [older, newer] }), NOW))).toBe('Conflict');
  });

  it('does not let grants that are not enforceable block: revoked, expired, unauthorised or other subjects', () => {
    const newer = policyGrant('newer', {}, at(5));
    const blockers = [
      policyGrant('revoked', { revokedAt: '2026-01-01T00:00:00Z' }, at(1)),
      policyGrant('expired', { expiryTime: '2026-01-01T00:00:00Z' }, at(1)),
      policyGrant('elsewhere', {}, { ...at(1), namespace: 'unbound' }),
      policyGrant('other-user', { userId: OTHER_USER }, at(1)),
      policyGrant('other-access', { constraints: { access: [{ accessType: 'file' }] } }, at(1)),
    ];
    expect(reasonOf(evaluateGrant(newer, viewOf({ grants: [newer, ...blockers] }), NOW))).toBe('Projected');
  });

  it('lets a grant blocked by an older one not block a newer one in turn', () => {
    const first = policyGrant('first', groupFields([ORG_A]), at(1));
    const second = policyGrant('second', groupFields([ORG_A, ORG_B]), at(2)); // blocked by first on ORG_A
    const third = policyGrant('third', groupFields([ORG_B]), at(3)); // overlaps only the blocked second
    const view = viewOf({ grants: [first, second, third] });
    expect([first, second, third].map((grant) => reasonOf(evaluateGrant(grant, view, NOW)))).toEqual([
      'Projected',
      'Conflict',
      'Projected',
    ]);
  });

  it('gives the same verdicts whatever the order the grants are looked at', () => {
    const grants = [policyGrant('a', {}, at(3)), policyGrant('b', {}, at(1)), policyGrant('c', {}, at(2))];
    const view = viewOf({ grants });
    const verdicts = grants.map((grant) => reasonOf(evaluateGrant(grant, view, NOW)));
    const reversed = [...grants]
      .reverse()
      .map((grant) => reasonOf(evaluateGrant(grant, view, NOW)))
      .reverse();
    expect(verdicts).toEqual(['Conflict', 'Projected', 'Conflict']);
    expect(reversed).toEqual(verdicts);
  });
});

describe('the cluster view', () => {
  it('accounts for a tuple by the grant that enforces it, ignoring the grant asking', () => {
    const grant = policyGrant('g');
    const view = viewOf({ grants: [grant] });
    const key = `resource:urn=3Adx=3Acat=3Aitem=3Aweather-stations#api_consumer@user:${USER}`;
    expect(view.accountFor(key, view.evaluator(NOW))).toMatchObject({ relation: 'api_consumer' });
    expect(view.accountFor(key, view.evaluator(NOW), 'policy-grant-system/g')).toBeUndefined();
  });

  it('accounts for owner tuples by the one CatalogItem of the item id, none when ambiguous', () => {
    const key = 'resource:urn=3Adx=3Acat=3Aitem=3Aweather-stations#owner@organization:' + ORG_A;
    expect(viewOf().accountFor(key, viewOf().evaluator(NOW))).toMatchObject({
      relation: 'owner',
    });
    const twins = viewOf({ items: [catalogItem('a'), catalogItem('b')] });
    expect(twins.accountFor(key, twins.evaluator(NOW))).toBeUndefined();
    const garbled = viewOf();
    expect(garbled.accountFor('resource:not=ZZencoded#owner@user:x', garbled.evaluator(NOW))).toBeUndefined();
  });
});

describe('the reasons a grant is withheld', () => {
  it('are every reason of the Enforced condition but Projected, with AccessTypeNotAllowed', () => {
    expect(WITHHELD_REASONS).not.toContain('Projected');
    expect([...WITHHELD_REASONS].sort()).toEqual(
      Object.values(GrantReason)
        .filter((reason) => reason !== 'Projected')
        .sort(),
    );
    expect(WITHHELD_REASONS).toContain('AccessTypeNotAllowed');
  });
});
