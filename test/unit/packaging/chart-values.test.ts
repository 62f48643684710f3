import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { CHART_DIR, REPO_ROOT } from '../../../hack/sync-packaging.js';

// values.yaml, values.schema.json and the chart README describe the same values; the chart's versions follow the
// project's.

interface SchemaNode {
  type?: string | string[];
  properties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
}

const values = yaml.load(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;
const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as SchemaNode;
const readme = readFileSync(join(CHART_DIR, 'README.md'), 'utf8');
const chart = yaml.load(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as Record<string, string>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Paths of the values a user sets: keys of structured objects are walked, maps and lists are values. */
function valuePaths(node: unknown, schemaNode: SchemaNode | undefined, prefix = ''): string[] {
  if (!isRecord(node) || !schemaNode?.properties) return [prefix];
  return Object.entries(node).flatMap(([key, child]) =>
    valuePaths(child, schemaNode.properties?.[key], prefix ? `${prefix}.${key}` : key),
  );
}

/** Paths of the structured objects of the schema, with the keys each declares. */
function schemaObjects(node: SchemaNode, prefix = ''): { path: string; keys: string[] }[] {
  if (!node.properties) return [];
  return [
    { path: prefix, keys: Object.keys(node.properties).sort() },
    ...Object.entries(node.properties).flatMap(([key, child]) =>
      schemaObjects(child, prefix ? `${prefix}.${key}` : key),
    ),
  ];
}

function valueAt(path: string): unknown {
  return path
    ? path.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], values)
    : values;
}

describe('values.yaml, values.schema.json and README.md', () => {
  it('the schema declares exactly the keys values.yaml has, at every level, and refuses any other', () => {
    for (const { path, keys } of schemaObjects(schema)) {
      expect(Object.keys(valueAt(path) as object).sort(), `keys of ${path || 'the top level'}`).toEqual(keys);
    }
    const closed = (node: SchemaNode): boolean =>
      !node.properties ||
      (node.additionalProperties === false && Object.values(node.properties).every(closed));
    expect(closed(schema)).toBe(true);
  });

  it('the README documents every value', () => {
    const paths = valuePaths(values, schema);
    expect(paths.length).toBeGreaterThan(80);
    const undocumented = paths.filter((path) => !readme.includes(`\`${path}\``));
    expect(undocumented).toEqual([]);
  });

  it("the chart's version and appVersion are the project's version", () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(chart.version).toBe(version);
    expect(chart.appVersion).toBe(version);
  });

  it('the bundled and read-only SpiceDBs, and config/production’s, run the SpiceDB version the test suites run against', () => {
    const pinned = /^SPICEDB_VERSION=(\S+)$/m.exec(
      readFileSync(join(REPO_ROOT, 'hack/tools/versions.env'), 'utf8'),
    );
    expect(valueAt('spicedb.bundled.image.tag')).toBe(pinned?.[1]);
    expect(valueAt('spicedb.readOnly.image.tag')).toBe(pinned?.[1]);
    const production = readFileSync(join(REPO_ROOT, 'config/production/spicedb-postgres.yaml'), 'utf8');
    const images = [...production.matchAll(/image: (\S+)/g)].map((match) => match[1]);
    expect(images.length).toBeGreaterThan(0);
    expect(new Set(images)).toEqual(new Set([`authzed/spicedb:${pinned?.[1]}`]));
  });
});
