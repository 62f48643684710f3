import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { CHART_DIR, REPO_ROOT } from '../../../hack/sync-packaging.js';

// The Helm examples of the docs, read out of their fenced blocks so that a test can render each: `helm install`,
// `upgrade` and `template` commands of shell blocks, and YAML blocks of chart values.

/** The pages whose Helm examples a reader copies. */
export const EXAMPLE_PAGES = [
  'README.md',
  'docs/install.md',
  'docs/production.md',
  'charts/policy-grant-operator/README.md',
];

/** Pages of upgrades only: their upgrades reuse the values of the install on the page named. */
export const UPGRADE_PAGES: Record<string, string> = { 'docs/upgrade.md': 'docs/install.md' };

export interface FencedBlock {
  page: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: string;
  text: string;
}

export function fencedBlocks(page: string): FencedBlock[] {
  const lines = readFileSync(join(REPO_ROOT, page), 'utf8').split('\n');
  const blocks: FencedBlock[] = [];
  let open: { line: number; language: string; indent: number; body: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^(\s*)```(\S*)\s*$/.exec(text);
    if (fence && !open)
      open = { line: index + 1, language: fence[2] ?? '', indent: fence[1]?.length ?? 0, body: [] };
    else if (fence && open) {
      blocks.push({ page, line: open.line, language: open.language, text: open.body.join('\n') });
      open = undefined;
    } else open?.body.push(text.slice(open.indent));
  });
  return blocks;
}

export interface HelmCommand {
  verb: 'install' | 'upgrade' | 'template';
  release: string;
  chart: string;
  /** The flags as helm gets them (values files, --set, ...), placeholders filled in. */
  flags: string[];
  /** --reuse-values or --reset-then-reuse-values: the release's values, i.e. those of the page's install. */
  reusesValues: boolean;
}

/** Flags that take a value, as a separate word or after `=`. */
const VALUED_FLAGS = new Set([
  '-n',
  '--namespace',
  '--set',
  '--set-string',
  '--set-file',
  '--set-json',
  '-f',
  '--values',
  '--version',
  '--timeout',
  '--kube-version',
  '-s',
  '--show-only',
]);
/** Flags that change nothing helm template renders. */
const IGNORED_FLAGS = new Set(['--wait', '--atomic', '--create-namespace', '--install', '--debug']);
const REUSE_FLAGS = new Set(['--reuse-values', '--reset-then-reuse-values']);

/** The helm install/upgrade/template commands of a shell block (continuation lines joined). */
export function helmCommands(block: FencedBlock): HelmCommand[] {
  if (!['sh', 'bash', 'shell', 'console'].includes(block.language)) return [];
  return shellCommands(block.text.replace(/\\\n/g, ' '))
    .filter((words) => words[0] === 'helm' && ['install', 'upgrade', 'template'].includes(words[1] ?? ''))
    .map((words) => helmCommand(words));
}

function helmCommand(words: string[]): HelmCommand {
  const [, verb, ...rest] = words;
  const positional: string[] = [];
  const flags: string[] = [];
  let reusesValues = false;
  for (let index = 0; index < rest.length; index++) {
    const word = rest[index] ?? '';
    const name = word.split('=')[0] ?? '';
    if (!word.startsWith('-')) positional.push(word);
    else if (REUSE_FLAGS.has(name)) reusesValues = true;
    else if (IGNORED_FLAGS.has(name) || name === '--dry-run') continue;
    else if (!VALUED_FLAGS.has(name))
      throw new Error(`a documented helm flag this test does not know: ${word}`);
    else if (name === '-n' || name === '--namespace') index += word.includes('=') ? 0 : 1;
    else if (word.includes('=') && word.startsWith('--')) flags.push(word);
    else flags.push(word, rest[++index] ?? '');
  }
  const [release = '', chart = ''] = positional;
  return { verb: verb as HelmCommand['verb'], release, chart, flags, reusesValues };
}

/** The top-level keys of the chart's values: a YAML block made of them only is a values example. */
const VALUE_KEYS = new Set(
  Object.keys(yaml.load(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>),
);

export function isValuesExample(block: FencedBlock): boolean {
  if (!['yaml', 'yml'].includes(block.language)) return false;
  const document = yaml.load(block.text) as unknown;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return false;
  const keys = Object.keys(document);
  return keys.length > 0 && keys.every((key) => VALUE_KEYS.has(key));
}

/**
 * A shell text as commands of words: quotes removed, `$(...)`, `$VAR` and `<placeholder>` filled in with example
 * words (a reader's own values), comments dropped, commands split at `;`, `&&`, `||`, `|` and new lines.
 */
export function shellCommands(text: string): string[][] {
  const commands: string[][] = [[]];
  let word: string | undefined;
  const current = () => commands[commands.length - 1] as string[];
  const endWord = () => {
    if (word !== undefined) current().push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (current().length) commands.push([]);
  };
  for (let index = 0; index < text.length; index++) {
    const char = text[index] ?? '';
    if (char === '#' && word === undefined) index = skipComment(text, index);
    else if (['\n', ';', '|', '&'].includes(char)) {
      endCommand();
      if (text[index + 1] === char) index++;
    } else if (/\s/.test(char)) endWord();
    else if (char === "'") {
      const end = text.indexOf("'", index + 1);
      if (end === -1)
        throw new Error(`an unclosed quote in a documented command: ${text.slice(index, index + 60)}`);
      word = (word ?? '') + text.slice(index + 1, end);
      index = end;
    } else if (char === '"') {
      const end = closingQuote(text, index);
      word = (word ?? '') + expand(text.slice(index + 1, end));
      index = end;
    } else if (char === '$' || char === '<') {
      const end = substitutionEnd(text, index);
      word = (word ?? '') + expand(text.slice(index, end + 1));
      index = end;
    } else word = (word ?? '') + (char === '\\' ? (text[++index] ?? '') : char);
  }
  endCommand();
  return commands.filter((command) => command.length);
}

function skipComment(text: string, index: number): number {
  const end = text.indexOf('\n', index);
  return (end === -1 ? text.length : end) - 1;
}

function closingQuote(text: string, open: number): number {
  for (let index = open + 1; index < text.length; index++) {
    if (text[index] === '\\') index++;
    else if (text[index] === '$' && text[index + 1] === '(') index = substitutionEnd(text, index);
    else if (text[index] === '"') return index;
  }
  throw new Error(`an unclosed quote in a documented command: ${text.slice(open, open + 60)}`);
}

/** The last index of the `$(...)`, `${...}`, `$NAME` or `<placeholder>` that starts at `start`. */
function substitutionEnd(text: string, start: number): number {
  if (text[start] === '<') return /^<[^<>\n]+>/.test(text.slice(start)) ? text.indexOf('>', start) : start;
  const open = text[start + 1];
  if (open === '(' || open === '{') {
    const close = open === '(' ? ')' : '}';
    let depth = 0;
    for (let index = start + 1; index < text.length; index++) {
      if (text[index] === open) depth++;
      else if (text[index] === close && --depth === 0) return index;
    }
  }
  return start + (/^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(start + 1))?.[0].length ?? 0);
}

/** Example words for what a reader fills in: each substitution and placeholder becomes `example`. */
function expand(text: string): string {
  return text.replace(
    /\$\((?:[^()]|\([^()]*\))*\)|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|<[^<>\n]+>/g,
    'example',
  );
}
