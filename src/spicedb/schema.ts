import { readFileSync } from 'node:fs';

/** The project's SpiceDB schema; the controller writes it at start-up when SpiceDB's differs. */
export const SCHEMA_FILE = new URL('./schema.zed', import.meta.url);

export function readSchemaText(): string {
  return readFileSync(SCHEMA_FILE, 'utf8');
}

export interface DefinitionShape {
  /** Relation name → its allowed subject types as written, e.g. `organization#member with expiration`. */
  relations: Map<string, string[]>;
  permissions: Set<string>;
}

export type SchemaShape = Map<string, DefinitionShape>;

const COMMENTS = /\/\*[\s\S]*?\*\/|\/\/[^\n]*/g;
const DEFINITION = /definition\s+([a-z][a-z0-9_]*)\s*\{([^}]*)\}/g;
const RELATION = /^\s*relation\s+([a-z][a-z0-9_]*)\s*:\s*(.+?)\s*$/gm;
const PERMISSION = /^\s*permission\s+([a-z][a-z0-9_]*)\s*=/gm;

/**
 * The names a schema defines, read with regular expressions: enough for the project's own schema (one
 * relation per line, no caveats), not a parser of the whole language. SpiceDB validates the real thing.
 */
export function parseSchemaShape(schemaText: string): SchemaShape {
  const shape: SchemaShape = new Map();
  for (const [, name = '', body = ''] of schemaText.replace(COMMENTS, '').matchAll(DEFINITION)) {
    const relations = new Map<string, string[]>();
    for (const [, relation = '', types = ''] of body.matchAll(RELATION)) {
      relations.set(
        relation,
        types.split('|').map((type) => type.trim().replace(/\s+/g, ' ')),
      );
    }
    const permissions = new Set([...body.matchAll(PERMISSION)].map(([, permission = '']) => permission));
    shape.set(name, { relations, permissions });
  }
  return shape;
}
