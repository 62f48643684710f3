import { z } from 'zod';
import type { CelValidation } from './cross-field-rules.js';

/** An OpenAPI v3 schema node as apiextensions.k8s.io/v1 accepts it in a structural schema. */
export interface StructuralSchema {
  type: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  pattern?: string;
  enum?: readonly string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: StructuralSchema;
  properties?: Record<string, StructuralSchema>;
  required?: readonly string[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: readonly string[];
  'x-kubernetes-validations'?: readonly CelValidation[];
}

type JsonSchemaNode = Record<string, unknown>;

/** Keywords that mean the same in zod's JSON Schema and in a Kubernetes structural schema. */
const COPIED_KEYWORDS = new Set([
  'type',
  'description',
  'format',
  'pattern',
  'enum',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'minItems',
  'maxItems',
  'required',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-validations',
]);

/**
 * The structural schema of a zod schema. Converts from `z.toJSONSchema` (OpenAPI 3.0 target, so no
 * `$schema`; input side, so no `additionalProperties: false`: Kubernetes prunes unknown fields instead).
 * A keyword that a structural schema cannot hold (anyOf, $ref, additionalProperties, …) is an error
 * naming the field, so a zod construct that Kubernetes cannot enforce never reaches a CRD unnoticed.
 */
export function toStructuralSchema(schema: z.ZodType): StructuralSchema {
  return convertNode(z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input' }), '');
}

function convertNode(node: JsonSchemaNode, path: string): StructuralSchema {
  const converted: JsonSchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (keyword === 'properties') converted.properties = convertProperties(value as JsonSchemaNode, path);
    else if (keyword === 'items') converted.items = convertNode(value as JsonSchemaNode, `${path}[*]`);
    else if (isSafeIntegerBound(keyword, value)) continue;
    else if (COPIED_KEYWORDS.has(keyword)) converted[keyword] = value;
    else throw new Error(`${path || '<root>'}: "${keyword}" cannot appear in a Kubernetes structural schema`);
  }
  if (typeof converted.type !== 'string')
    throw new Error(`${path || '<root>'}: a structural schema needs a type`);
  return converted as unknown as StructuralSchema;
}

function convertProperties(properties: JsonSchemaNode, path: string): Record<string, StructuralSchema> {
  return Object.fromEntries(
    Object.entries(properties).map(([name, child]) => [
      name,
      convertNode(child as JsonSchemaNode, `${path}.${name}`),
    ]),
  );
}

/** z.int() bounds itself to the safe integers; Kubernetes integers are int64, so the bound is noise. */
function isSafeIntegerBound(keyword: string, value: unknown): boolean {
  return (
    (keyword === 'maximum' && value === Number.MAX_SAFE_INTEGER) ||
    (keyword === 'minimum' && value === Number.MIN_SAFE_INTEGER)
  );
}
