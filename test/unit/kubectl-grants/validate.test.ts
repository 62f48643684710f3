import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from '../../../src/kubectl-grants/main.js';

// `kubectl grants validate` offline: the samples pass, each broken manifest is refused with one line naming
// its file, object and field, and assertions are checked against the one verdict on the manifests.

const SAMPLES = 'config/samples';
const USER = '3f1c2a9e-0b4d-4e8a-9c7f-2d5e6a7b8c9d';
const ITEM = 'urn:dx:cat:item:weather-stations';

async function validate(...args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(['validate', ...args], {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
  });
  return { code, out, err };
}

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'kubectl-grants-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const grant = (spec: string, metadata = 'name: g\n  namespace: weather-org') =>
  `apiVersion: acl.policygrant.dev/v1alpha1\nkind: PolicyGrant\nmetadata:\n  ${metadata}\nspec:\n${spec}`;
const VALID_SPEC = `  policyType: INDIVIDUAL\n  userId: ${USER}\n  itemId: ${ITEM}\n  itemType: DATABANK\n  expiryTime: '2099-01-01T00:00:00Z'\n  constraints:\n    access:\n      - accessType: api\n`;

describe('kubectl grants validate', () => {
  it('accepts the samples', async () => {
    expect(await validate('-f', SAMPLES)).toEqual({ code: 0, out: [`${SAMPLES}: valid`], err: [] });
  });

  const broken: [string, string, string][] = [
    [
      'a missing userId',
      grant(VALID_SPEC.replace(/ {2}userId: .*\n/, '')),
      'PolicyGrant/g: spec.userId: userId is required when policyType is INDIVIDUAL',
    ],
    [
      'a bad expiry',
      grant(VALID_SPEC.replace('2099-01-01T00:00:00Z', 'soon')),
      'PolicyGrant/g: spec.expiryTime: Invalid date-time',
    ],
    [
      'a repeated access type',
      grant(`${VALID_SPEC}      - accessType: api\n`),
      'PolicyGrant/g: spec.constraints.access: each accessType may appear only once',
    ],
    [
      'a missing itemId',
      grant(VALID_SPEC.replace(/ {2}itemId: .*\n/, '')),
      'PolicyGrant/g: spec.itemId: Invalid input: expected string, received undefined',
    ],
    [
      'a policyType out of its enum',
      grant(VALID_SPEC.replace('INDIVIDUAL', 'TEAM')),
      'PolicyGrant/g: spec.policyType: Invalid option: expected one of "INDIVIDUAL"|"GROUP"',
    ],
    [
      'a GROUP grant without allowedOrgIds',
      grant(VALID_SPEC.replace('INDIVIDUAL', 'GROUP').replace(/ {2}userId: .*\n/, '')),
      'PolicyGrant/g: spec.constraints.subjects.allowedOrgIds: constraints.subjects.allowedOrgIds is required when policyType is GROUP',
    ],
    ['a missing name', grant(VALID_SPEC, 'namespace: weather-org'), 'PolicyGrant/?: metadata.name: required'],
    [
      'an unknown kind',
      'apiVersion: acl.policygrant.dev/v1alpha1\nkind: Widget\nmetadata:\n  name: w\n',
      'Widget/w: kind: Widget is not a kind of acl.policygrant.dev/v1alpha1',
    ],
    [
      'a namespaced CatalogItem',
      'apiVersion: acl.policygrant.dev/v1alpha1\nkind: CatalogItem\nmetadata:\n  name: c\n  namespace: x\nspec:\n  itemId: u\n  itemType: DATABANK\n  ownerId: 6f1d3c2a-8b4e-4f7a-9c1d-2e3f4a5b6c7d\n  organisationId: 6f1d3c2a-8b4e-4f7a-9c1d-2e3f4a5b6c7d\n  accessTypes: [api]\n',
      'CatalogItem/c: metadata.namespace: CatalogItem is cluster-scoped',
    ],
    ['text that is not YAML', 'a: [b\n', 'not YAML'],
    [
      'a kind that is a list',
      'apiVersion: acl.policygrant.dev/v1alpha1\nkind: [PolicyGrant]\nmetadata:\n  name: g\n',
      '?/g: kind: must be a string',
    ],
    [
      'a name that is a map',
      grant(VALID_SPEC, 'name: {first: g}\n  namespace: weather-org'),
      'PolicyGrant/?: metadata.name: must be a string',
    ],
    [
      'more aliases than the bound',
      `a: &a {b: c}\nlist: [${Array(101).fill('*a').join(', ')}]\n`,
      'more than 100 aliases',
    ],
    ['an alias inside its own anchor', 'a: &a\n  b: *a\n', 'an alias refers to a node that contains it'],
  ];
  for (const [what, text, line] of broken) {
    it(`refuses ${what} with one line naming file, object and field`, async () => {
      const dir = folder({ 'broken.yaml': text });
      const result = await validate('-f', dir);
      expect(result.code).toBe(1);
      expect(result.err).toEqual([expect.stringContaining(`${join(dir, 'broken.yaml')}: ${line}`)]);
    });
  }

  it('checks allow and deny assertions against the verdict on the manifests', async () => {
    const asserts = folder({
      'ok.txt': `# the samples\nallow ${USER} ${ITEM} api\nallow ${USER} ${ITEM} file\ndeny ${USER} ${ITEM} sub\ndeny agent:bot ${ITEM} api\n`,
      'wrong.txt': `deny ${USER} ${ITEM} api\nmaybe ${USER}\n`,
    });
    expect((await validate('-f', SAMPLES, '--assert', join(asserts, 'ok.txt'))).code).toBe(0);
    const wrong = await validate('-f', SAMPLES, '--assert', join(asserts, 'wrong.txt'));
    expect(wrong.code).toBe(1);
    expect(wrong.err).toEqual([
      `${join(asserts, 'wrong.txt')}:2: expected "allow|deny <user | agent:<id>> <itemId> <accessType>"`,
      `${join(asserts, 'wrong.txt')}:1: expected deny, the verdict is allow: allowed by PolicyGrant weather-org/weather-stations-for-ana`,
    ]);
  });

  it('names the reason of each denial in a failed assertion, as the explanation does', async () => {
    const user = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const spec = (n: number, extra = '') => VALID_SPEC.replace(USER, user(n)) + extra;
    const manifests = folder({
      'namespaces.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: elsewhere\n',
      'grants.yaml': [
        grant(spec(1, "  revokedAt: '2026-01-01T00:00:00Z'\n"), 'name: revoked\n  namespace: weather-org'),
        grant(spec(2).replace('2099-01-01', '2020-01-01'), 'name: expired\n  namespace: weather-org'),
        grant(spec(3), 'name: unbound\n  namespace: elsewhere'),
        grant(spec(4).replace(ITEM, 'urn:dx:item:none'), 'name: missing\n  namespace: weather-org'),
      ].join('---\n'),
    });
    const cases: [number, string, string][] = [
      [1, ITEM, 'Revoked'],
      [2, ITEM, 'Expired'],
      [3, ITEM, 'NamespaceNotBound'],
      [4, 'urn:dx:item:none', 'ItemMissing'],
    ];
    const asserts = folder({
      'deny.txt': cases.map(([n, item]) => `deny ${user(n)} ${item} api`).join('\n'),
      'allow.txt': cases.map(([n, item]) => `allow ${user(n)} ${item} api`).join('\n'),
    });
    const targets = ['-f', SAMPLES, '-f', manifests];
    expect(await validate(...targets, '--assert', join(asserts, 'deny.txt'))).toMatchObject({
      code: 0,
      err: [],
    });
    const allow = await validate(...targets, '--assert', join(asserts, 'allow.txt'));
    expect(allow.code).toBe(1);
    expect(allow.err).toEqual(
      cases.map(([, , reason], index) =>
        expect.stringMatching(
          new RegExp(`allow.txt:${index + 1}: expected allow, the verdict is deny: .*\\(${reason}\\)`),
        ),
      ),
    );
  });

  it('refuses an alias bomb at once, naming its file, and validates the files after it', async () => {
    // Nine levels of nine aliases in a few hundred bytes: 9^9 strings when expanded, as the name of the grant.
    const levels = 'abcdefghi'.split('').map((anchor, level, all) => {
      const member = level === 0 ? '"lol"' : `*${all[level - 1]}`;
      return `${anchor}: &${anchor} [${Array(9).fill(member).join(',')}]`;
    });
    const bomb = `apiVersion: acl.policygrant.dev/v1alpha1\nkind: PolicyGrant\n${levels.join('\n')}\nmetadata:\n  name: *i\n`;
    const manifests = folder({ 'bomb.yaml': bomb });
    const asserts = folder({ 'samples.txt': `allow ${USER} ${ITEM} api\n` });
    const result = await validate('-f', manifests, '-f', SAMPLES, '--assert', join(asserts, 'samples.txt'));
    expect(result.err).toEqual([`${join(manifests, 'bomb.yaml')}: aliases expand to more than 100000 nodes`]);
    expect(result.code).toBe(1);
  });

  it('exits 2 with the usage for a command line it cannot run', async () => {
    expect((await validate()).code).toBe(2);
    expect(await run(['nonsense'], { out: () => {}, err: () => {} })).toBe(2);
  });
});
