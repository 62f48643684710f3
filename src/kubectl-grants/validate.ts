import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { loadAll } from 'js-yaml';
import type { z } from 'zod';
import {
  AgentSpecSchema,
  CatalogItemSpecSchema,
  DelegationSpecSchema,
  GROUP_VERSION,
  MembershipSpecSchema,
  PolicyGrantSpecSchema,
} from '../api/v1alpha1/index.js';
import { explain, type Subject } from '../verdict/explanation.js';
import type { Registry } from '../spicedb/registry.js';
import { listerOf, NO_OBJECTS, type ListedObjects } from './listed-objects.js';

// Offline validation of manifests for GitOps CI: the zod schemas the CRDs are generated from (their
// cross-field rules included), and assertions of expected verdicts on the objects the manifests make.

/** The kinds of the API group that validate knows, with their spec schema and whether they are namespaced. */
const KINDS: Record<string, { spec: z.ZodType; namespaced: boolean; list: keyof ListedObjects }> = {
  PolicyGrant: { spec: PolicyGrantSpecSchema, namespaced: true, list: 'grants' },
  CatalogItem: { spec: CatalogItemSpecSchema, namespaced: false, list: 'items' },
  Membership: { spec: MembershipSpecSchema, namespaced: true, list: 'memberships' },
  Delegation: { spec: DelegationSpecSchema, namespaced: true, list: 'delegations' },
  Agent: { spec: AgentSpecSchema, namespaced: true, list: 'agents' },
};

export interface ValidateOptions {
  /** Where an object without metadata.namespace lands, as `kubectl apply -n` would put it. */
  namespace: string;
  aclNamespace: string;
  registry: Registry;
  now: Date;
}

export interface Validation {
  /** One line per problem: `<file>: <object>: <path>: <message>`. */
  problems: string[];
  objects: ListedObjects;
}

/** The manifest files under `target` (a file, or a folder walked recursively), in name order. */
export function manifestFiles(target: string): string[] {
  if (!statSync(target).isDirectory()) return [target];
  return readdirSync(target, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const path = join(target, entry.name);
      if (entry.isDirectory()) return manifestFiles(path);
      return /\.(ya?ml|json)$/.test(entry.name) ? [path] : [];
    });
}

/**
 * Bounds on what a file's aliases may expand to. js-yaml makes an alias a second reference to its anchor's
 * node, so loading is cheap, but every walk that follows (the schemas, a label's string) visits the expansion:
 * nine levels of nine aliases are 9^9 nodes from a few hundred bytes. Real manifests alias a few blocks.
 */
const MAX_ALIASES = 100;
const MAX_EXPANDED_NODES = 100_000;

/** The documents of one manifest file; throws, naming the problem, for text it will not walk. */
function loadManifest(file: string): unknown[] {
  let documents: unknown[];
  try {
    documents = loadAll(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`not YAML: ${(error as Error).message.split('\n')[0]}`, { cause: error });
  }
  const walk = { aliases: 0, sizes: new Map<object, number>() };
  for (const document of documents) expandedSize(document, walk);
  return documents;
}

/** The node count of `node` with its aliases expanded, from the memo of each shared node (linear in the file). */
function expandedSize(node: unknown, walk: { aliases: number; sizes: Map<object, number> }): number {
  if (node === null || typeof node !== 'object') return 1;
  const known = walk.sizes.get(node);
  if (known !== undefined) {
    if (++walk.aliases > MAX_ALIASES) throw new Error(`more than ${MAX_ALIASES} aliases`);
    if (Number.isNaN(known)) throw new Error('an alias refers to a node that contains it');
    return known;
  }
  walk.sizes.set(node, Number.NaN);
  let size = 1;
  for (const child of Object.values(node)) size += expandedSize(child, walk);
  if (size > MAX_EXPANDED_NODES) throw new Error(`aliases expand to more than ${MAX_EXPANDED_NODES} nodes`);
  walk.sizes.set(node, size);
  return size;
}

export function validateManifests(targets: string[], options: ValidateOptions): Validation {
  const problems: string[] = [];
  const objects = Object.fromEntries(Object.keys(NO_OBJECTS).map((list) => [list, []])) as unknown as Record<
    keyof ListedObjects,
    KubernetesObject[]
  >;
  for (const file of targets.flatMap(manifestFiles)) {
    let documents: unknown[];
    try {
      documents = loadManifest(file);
    } catch (error) {
      problems.push(`${file}: ${(error as Error).message}`);
      continue;
    }
    documents.forEach((document, index) => {
      const checked = checkDocument(document, options);
      const where = `${file}: ${checked.label ?? `document ${index + 1}`}`;
      problems.push(...checked.problems.map((problem) => `${where}: ${problem}`));
      if (checked.problems.length === 0 && checked.list) objects[checked.list].push(checked.object);
    });
  }
  return { problems, objects: objects as unknown as ListedObjects };
}

interface CheckedDocument {
  label?: string;
  problems: string[];
  list?: keyof ListedObjects;
  object: KubernetesObject;
}

function checkDocument(document: unknown, options: ValidateOptions): CheckedDocument {
  if (document === null || document === undefined) return { problems: [], object: {} };
  if (typeof document !== 'object' || Array.isArray(document)) {
    return { problems: ['not a Kubernetes object'], object: {} };
  }
  const object = document as KubernetesObject & { spec?: unknown };
  const notStrings = notStringFields(object);
  const label = `${textOr(object.kind)}/${textOr(object.metadata?.name)}`;
  if (notStrings.length > 0) return { label, problems: notStrings, object: {} };
  if (object.apiVersion === 'v1' && object.kind === 'Namespace')
    return { label, problems: [], list: 'namespaces', object };
  if (object.apiVersion !== GROUP_VERSION) return { label, problems: [], object };
  const kind = KINDS[object.kind ?? ''];
  if (kind === undefined)
    return { label, problems: [`kind: ${object.kind} is not a kind of ${GROUP_VERSION}`], object };
  const problems: string[] = [];
  if (!object.metadata?.name) problems.push('metadata.name: required');
  if (!kind.namespaced && object.metadata?.namespace)
    problems.push(`metadata.namespace: ${object.kind} is cluster-scoped`);
  const parsed = kind.spec.safeParse(object.spec);
  if (!parsed.success) {
    for (const issue of parsed.error.issues)
      problems.push(`${['spec', ...issue.path].join('.')}: ${issue.message}`);
  }
  const namespace = kind.namespaced ? { namespace: object.metadata?.namespace ?? options.namespace } : {};
  return {
    label,
    problems,
    list: kind.list,
    object: { ...object, metadata: { ...object.metadata, ...namespace } },
  };
}

/** The identifying fields a manifest gives as something other than a string (a list, a map, a number); null is absent. */
function notStringFields(object: { apiVersion?: unknown; kind?: unknown; metadata?: unknown }): string[] {
  const metadata = (object.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const fields: [string, unknown][] = [
    ['apiVersion', object.apiVersion],
    ['kind', object.kind],
    ['metadata.name', metadata.name],
    ['metadata.namespace', metadata.namespace],
  ];
  return fields
    .filter(([, value]) => value !== undefined && value !== null && typeof value !== 'string')
    .map(([path]) => `${path}: must be a string`);
}

const textOr = (value: unknown) => (typeof value === 'string' && value !== '' ? value : '?');

/** One expected verdict: `allow|deny <user-id | agent:<id>> <itemId> <accessType>`. */
interface Assertion {
  line: number;
  expected: 'allow' | 'deny';
  subject: Subject;
  itemId: string;
  accessType: string;
}

export function parseSubject(text: string): Subject {
  return text.startsWith('agent:')
    ? { type: 'agent', id: text.slice(6) }
    : { type: 'user', id: text.replace(/^user:/, '') };
}

function parseAssertions(file: string, problems: string[]): Assertion[] {
  const assertions: Assertion[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, index) => {
      const text = raw.replace(/#.*/, '').trim();
      if (text === '') return;
      const [expected, subject, itemId, accessType, ...rest] = text.split(/\s+/);
      if (
        (expected !== 'allow' && expected !== 'deny') ||
        !subject ||
        !itemId ||
        !accessType ||
        rest.length > 0
      ) {
        problems.push(
          `${file}:${index + 1}: expected "allow|deny <user | agent:<id>> <itemId> <accessType>"`,
        );
        return;
      }
      assertions.push({ line: index + 1, expected, subject: parseSubject(subject), itemId, accessType });
    });
  return assertions;
}

/** The assertions of `file` that the one verdict on `objects` contradicts, one line each. */
export function checkAssertions(file: string, objects: ListedObjects, options: ValidateOptions): string[] {
  const problems: string[] = [];
  const view = listerOf({ ...NO_OBJECTS, ...objects }, options.aclNamespace, options.registry);
  for (const assertion of parseAssertions(file, problems)) {
    const explanation = explain(assertion, view, options.now);
    const actual = explanation.allowed ? 'allow' : 'deny';
    if (actual !== assertion.expected) {
      problems.push(
        `${file}:${assertion.line}: expected ${assertion.expected}, the verdict is ${actual}: ${explanation.message}`,
      );
    }
  }
  return problems;
}
