import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { CRDS_DIR, renderCrdFiles } from '../../../hack/generate-crds.js';
import {
  catalogItemCrd,
  customResourceDefinitions,
  grantClaimCrd,
  GrantClaimSpecSchema,
  policyGrantCrd,
  type StructuralSchema,
} from '../../../src/api/v1alpha1/index.js';

const REGENERATE = 'crds/ is out of date: run `npx tsx hack/generate-crds.ts`';

/** Every schema node with its path; `metadata` is the apiserver's own and must say nothing but its type. */
function schemaNodes(node: StructuralSchema, path: string): { path: string; node: StructuralSchema }[] {
  const children = [
    ...Object.entries(node.properties ?? {}).map(([name, child]) => schemaNodes(child, `${path}.${name}`)),
    ...(node.items ? [schemaNodes(node.items, `${path}[*]`)] : []),
  ];
  return [{ path, node }, ...children.flat()];
}

const crds = customResourceDefinitions().map((crd) => ({ name: crd.metadata.name, crd }));
const rootSchema = (crd = policyGrantCrd()) =>
  crd.spec.versions[0]?.schema.openAPIV3Schema as StructuralSchema;

describe('crds/', () => {
  it('holds exactly what the generator produces from the zod schemas (no drift)', () => {
    const committed = readdirSync(CRDS_DIR)
      .filter((file) => file.endsWith('.yaml'))
      .sort();
    const generated = renderCrdFiles();
    expect(committed, REGENERATE).toEqual(generated.map((file) => file.fileName).sort());
    for (const file of generated) {
      expect(readFileSync(join(CRDS_DIR, file.fileName), 'utf8'), REGENERATE).toBe(file.content);
    }
  });

  // One test per file: formatting them all in one test outgrew the unit timeout on a loaded machine.
  it.each(renderCrdFiles())(
    '$fileName is already formatted as prettier wants it, so `npm run lint` passes on generated files',
    async (file) => {
      const path = join(CRDS_DIR, file.fileName);
      const options = await prettier.resolveConfig(path);
      expect(await prettier.format(file.content, { ...options, filepath: path })).toBe(file.content);
    },
  );

  it('is deterministic', () => {
    expect(renderCrdFiles()).toEqual(renderCrdFiles());
  });

  it('uses kubebuilder file names', () => {
    expect(renderCrdFiles().map((file) => file.fileName)).toEqual([
      'acl.policygrant.dev_policygrants.yaml',
      'acl.policygrant.dev_catalogitems.yaml',
      'acl.policygrant.dev_memberships.yaml',
      'acl.policygrant.dev_grantclaims.yaml',
      'acl.policygrant.dev_delegations.yaml',
      'acl.policygrant.dev_agents.yaml',
      'acl.policygrant.dev_accessrequests.yaml',
    ]);
  });
});

describe.each(crds)('CRD $name', ({ crd }) => {
  const nodes = schemaNodes(rootSchema(crd), '');

  it('describes every field, so that kubectl explain has something to say', () => {
    const undescribed = nodes.filter(({ path, node }) => path !== '.metadata' && !node.description?.trim());
    expect(undescribed.map(({ path }) => path || '<root>')).toEqual([]);
  });

  it('is a structural schema: every node has a type, none forbids unknown fields', () => {
    for (const { path, node } of nodes) {
      expect({ path, type: typeof node.type }).toEqual({ path, type: 'string' });
      expect(node).not.toHaveProperty('additionalProperties');
      expect(node).not.toHaveProperty('$schema');
    }
  });

  it('leaves metadata to the apiserver', () => {
    expect(rootSchema(crd).properties?.metadata).toEqual({ type: 'object' });
  });

  it('bounds every list and free-form string of the spec (CEL cost estimates, object size)', () => {
    const spec = rootSchema(crd).properties?.spec;
    for (const { path, node } of schemaNodes(spec as StructuralSchema, '.spec')) {
      if (node.type === 'array')
        expect({ path, maxItems: node.maxItems }).toEqual({ path, maxItems: expect.any(Number) });
      if (node.type === 'string' && !node.enum && !node.pattern) {
        expect({ path, maxLength: node.maxLength }).toEqual({ path, maxLength: expect.any(Number) });
      }
    }
  });

  it('describes every printer column', () => {
    for (const column of crd.spec.versions[0]?.additionalPrinterColumns ?? []) {
      expect(column.description).not.toBe('');
    }
  });

  it('puts the kinds users write and read in the acl category, the internal GrantClaim in none', () => {
    expect(crd.spec.names.categories).toEqual(crd.spec.names.kind === 'GrantClaim' ? undefined : ['acl']);
  });
});

describe('PolicyGrant CRD', () => {
  const crd = policyGrantCrd();
  const version = crd.spec.versions[0];

  it('is namespaced, with a status subresource and its short names', () => {
    expect(crd.metadata.name).toBe('policygrants.acl.policygrant.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      kind: 'PolicyGrant',
      plural: 'policygrants',
      shortNames: ['pgrant'],
    });
    expect(version).toMatchObject({
      name: 'v1alpha1',
      served: true,
      storage: true,
      subresources: { status: {} },
    });
  });

  it('shows type, consumer, item, access, state, enforced, expiry and age', () => {
    const columns = version?.additionalPrinterColumns.filter((column) => !column.priority);
    expect(columns?.map((column) => [column.name, column.jsonPath])).toEqual([
      ['Type', '.spec.policyType'],
      ['Consumer', '.spec.userId'],
      ['Item', '.spec.itemId'],
      ['Access', '.status.access'],
      ['State', '.status.state'],
      ['Enforced', '.status.conditions[?(@.type=="Enforced")].status'],
      ['Expiry', '.spec.expiryTime'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('shows with -o wide the organisations, the namespace binding and the reason and message of Enforced', () => {
    const wide = version?.additionalPrinterColumns.filter((column) => column.priority === 1);
    expect(wide?.map((column) => [column.name, column.jsonPath])).toEqual([
      ['Orgs', '.spec.constraints.subjects.allowedOrgIds'],
      ['Binding', '.status.namespaceBinding'],
      ['Reason', '.status.conditions[?(@.type=="Enforced")].reason'],
      ['Message', '.status.conditions[?(@.type=="Enforced")].message'],
    ]);
  });

  it('keys status conditions by type, as Kubernetes conditions are', () => {
    const conditions = rootSchema(crd).properties?.status?.properties?.conditions;
    expect(conditions).toMatchObject({
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    });
  });
});

describe('CatalogItem CRD', () => {
  const crd = catalogItemCrd();

  it('is cluster-scoped, without status, with its short names', () => {
    expect(crd.metadata.name).toBe('catalogitems.acl.policygrant.dev');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toMatchObject({
      kind: 'CatalogItem',
      plural: 'catalogitems',
      shortNames: ['ci', 'citem'],
    });
    expect(crd.spec.versions[0]?.subresources).toBeUndefined();
    expect(rootSchema(crd).properties).not.toHaveProperty('status');
  });

  it('shows item, type, owner, organisation, access and age', () => {
    expect(crd.spec.versions[0]?.additionalPrinterColumns.map((column) => column.name)).toEqual([
      'Item',
      'Type',
      'Owner',
      'Organisation',
      'Access',
      'Age',
    ]);
  });
});

describe('GrantClaim CRD', () => {
  const crd = grantClaimCrd();
  const claim = {
    subject: 'user:0b5c3a9e-8f0e-4a59-9d0a-3f4b7c2e1d00',
    itemId: 'urn:dx:item:1',
    accessType: 'api',
    grantName: 'pg-x',
    state: 'bound',
    pendingSince: '2026-06-01T12:00:00Z',
  };

  it('is namespaced, without status, and says it is internal bookkeeping', () => {
    expect(crd.metadata.name).toBe('grantclaims.acl.policygrant.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toMatchObject({
      kind: 'GrantClaim',
      plural: 'grantclaims',
      shortNames: ['gclaim'],
    });
    expect(crd.spec.versions[0]?.subresources).toBeUndefined();
    expect(rootSchema(crd).description).toMatch(
      /^Internal bookkeeping of the ACL API, not for users to write/,
    );
  });

  it('shows subject, item, access, grant, state and age', () => {
    const columns = crd.spec.versions[0]?.additionalPrinterColumns.filter((column) => !column.priority);
    expect(columns?.map((column) => [column.name, column.jsonPath])).toEqual([
      ['Subject', '.spec.subject'],
      ['Item', '.spec.itemId'],
      ['Access', '.spec.accessType'],
      ['Grant', '.spec.grantName'],
      ['State', '.spec.state'],
      ['Age', '.metadata.creationTimestamp'],
    ]);
  });

  it('needs every field, and a subject of user:<uuid> or organization:<uuid>', () => {
    expect(rootSchema(crd).properties?.spec?.required).toEqual(Object.keys(claim));
    expect(GrantClaimSpecSchema.safeParse(claim).success).toBe(true);
    for (const subject of ['user:0B5C3A9E-8F0E-4A59-9D0A-3F4B7C2E1D00', 'group:x', 'user:']) {
      expect(GrantClaimSpecSchema.safeParse({ ...claim, subject }).success, subject).toBe(false);
    }
    expect(GrantClaimSpecSchema.safeParse({ ...claim, state: 'taken' }).success).toBe(false);
  });
});
