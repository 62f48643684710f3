import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as prettier from 'prettier';
import { describe, expect, it } from 'vitest';
import { CRDS_DIR, renderCrdFiles } from '../../../hack/generate-crds.js';
import {
  catalogItemCrd,
  customResourceDefinitions,
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

  it('is already formatted as prettier wants it, so `npm run lint` passes on generated files', async () => {
    for (const file of renderCrdFiles()) {
      const path = join(CRDS_DIR, file.fileName);
      const options = await prettier.resolveConfig(path);
      expect(await prettier.format(file.content, { ...options, filepath: path })).toBe(file.content);
    }
  });

  it('is deterministic', () => {
    expect(renderCrdFiles()).toEqual(renderCrdFiles());
  });

  it('uses kubebuilder file names', () => {
    expect(renderCrdFiles().map((file) => file.fileName)).toEqual([
      'acl.policygrant.dev_policygrants.yaml',
      'acl.policygrant.dev_catalogitems.yaml',
      'acl.policygrant.dev_memberships.yaml',
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

  it('puts both kinds in the acl category, and no category named like a resource', () => {
    expect(crd.spec.names.categories).toEqual(['acl']);
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
      shortNames: ['pg', 'pgrant'],
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
      ['Access', '.spec.constraints.access'],
      ['State', '.status.state'],
      ['Enforced', '.status.conditions[?(@.type=="Enforced")].status'],
      ['Expiry', '.spec.expiryTime'],
      ['Age', '.metadata.creationTimestamp'],
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
