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
import { NO_OBJECTS, ObjectView, type WorldObjects } from '../verdict/object-view.js';
import type { Registry } from '../spicedb/registry.js';

// Offline validation of manifests for GitOps CI: the zod schemas the CRDs are generated from (their
// cross-field rules included), and assertions of expected verdicts on the objects the manifests make.

/** The kinds of the API group that validate knows, with their spec schema and whether they are namespaced. */
const KINDS: Record<string, { spec: z.ZodType; namespaced: boolean; list: keyof WorldObjects }> = {
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
  objects: WorldObjects;
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

export function validateManifests(targets: string[], options: ValidateOptions): Validation {
  const problems: string[] = [];
  const objects = Object.fromEntries(Object.keys(NO_OBJECTS).map((list) => [list, []])) as unknown as Record<
    keyof WorldObjects,
    KubernetesObject[]
  >;
  for (const file of targets.flatMap(manifestFiles)) {
    let documents: unknown[];
    try {
      documents = loadAll(readFileSync(file, 'utf8'));
    } catch (error) {
      problems.push(`${file}: not YAML: ${(error as Error).message.split('\n')[0]}`);
      continue;
    }
    documents.forEach((document, index) => {
      const checked = checkDocument(document, options);
      const where = `${file}: ${checked.label ?? `document ${index + 1}`}`;
      problems.push(...checked.problems.map((problem) => `${where}: ${problem}`));
      if (checked.problems.length === 0 && checked.list) objects[checked.list].push(checked.object);
    });
  }
  return { problems, objects: objects as unknown as WorldObjects };
}

interface CheckedDocument {
  label?: string;
  problems: string[];
  list?: keyof WorldObjects;
  object: KubernetesObject;
}

function checkDocument(document: unknown, options: ValidateOptions): CheckedDocument {
  if (document === null || document === undefined) return { problems: [], object: {} };
  if (typeof document !== 'object' || Array.isArray(document)) {
    return { problems: ['not a Kubernetes object'], object: {} };
  }
  const object = document as KubernetesObject & { spec?: unknown };
  const label = `${object.kind ?? '?'}/${object.metadata?.name ?? '?'}`;
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
export function checkAssertions(file: string, objects: WorldObjects, options: ValidateOptions): string[] {
  const problems: string[] = [];
  const world = new ObjectView({ ...NO_OBJECTS, ...objects }, options.aclNamespace, options.registry);
  for (const assertion of parseAssertions(file, problems)) {
    const explanation = explain(assertion, world, options.now);
    const actual = explanation.allowed ? 'allow' : 'deny';
    if (actual !== assertion.expected) {
      problems.push(
        `${file}:${assertion.line}: expected ${assertion.expected}, the verdict is ${actual}: ${explanation.message}`,
      );
    }
  }
  return problems;
}
