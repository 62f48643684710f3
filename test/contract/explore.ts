import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { readCommandLine } from '../../dev/cli/cli-arguments.js';
import { processOutput } from '../../dev/cli/cli-output.js';
import { resolveToolPaths } from '../../dev/localplane/tool-paths.js';
import { ensureDevSigningKey } from '../../dev/tokens/dev-signing-key.js';
import { mintToken } from '../../dev/tokens/dev-token.js';
import { parseStateFile } from '../../dev/stack/state-file.js';
import type { CatalogItem } from '../../src/api/v1alpha1/index.js';
import { runIfEntrypoint } from '../../src/cmd/process-lifecycle.js';
import { CI_SEED } from './support/fuzzing.js';
import { runSchemathesis, schemathesisBinary } from './support/schemathesis.js';
import { CONTRACT_DOCUMENTS, type ContractDocumentName, type ContractStack } from './support/targets.js';

const run = promisify(execFile);
const DOCUMENTS = Object.keys(CONTRACT_DOCUMENTS) as ContractDocumentName[];
const DEFAULT_EXAMPLES = 100;

const USAGE = `Usage: npm run contract:explore -- [--seed <n>]... [--max-examples <n>] [--document ${DOCUMENTS.join('|')}]...
         [--dir <folder>]

Runs the contract test's schemathesis configuration (its checks, hooks and stateful phase) against the stack
\`npm run start:contract\` runs, whose state folder is --dir (default: DEV_STATE_DIR, else .dev): each document
(default: all) once per seed (default: ${CI_SEED}), --max-examples cases per operation (default: ${DEFAULT_EXAMPLES}).
Exits 1 when a run reports a failure.
`;

// A 100-example run of the ACL API can take over an hour on two loaded cores: its token must outlive it.
const TOKEN_TTL_SECONDS = 12 * 3_600;

export interface Exploration {
  seeds: string[];
  examplesPerOperation: number;
  documents: ContractDocumentName[];
  stateDir: string;
}

export function exploration(values: Record<string, unknown>): Exploration | string {
  const seeds = (values.seed as string[] | undefined) ?? [CI_SEED];
  const examples = Number(values['max-examples'] ?? DEFAULT_EXAMPLES);
  const documents = (values.document as string[] | undefined) ?? DOCUMENTS;
  if (!seeds.every((seed) => /^\d+$/.test(seed))) return '--seed must be a non-negative integer';
  if (!Number.isInteger(examples) || examples < 1) return '--max-examples must be a positive integer';
  const unknown = documents.find((name) => !DOCUMENTS.includes(name as ContractDocumentName));
  if (unknown !== undefined) return `--document ${unknown}: one of ${DOCUMENTS.join(', ')}`;
  const stateDir = resolve((values.dir as string | undefined) ?? process.env.DEV_STATE_DIR ?? '.dev');
  return { seeds, examplesPerOperation: examples, documents: documents as ContractDocumentName[], stateDir };
}

/** The stack whose state folder is `stateDir`: its `env` file, and tokens signed with its key. */
async function runningStack(stateDir: string): Promise<ContractStack> {
  const envFile = join(stateDir, 'env');
  const env = parseStateFile(await readFile(envFile, 'utf8'));
  const { ACL_URL, DECISION_URL, CONTROLLER_URL, KUBECONFIG } = env;
  if (!ACL_URL || !DECISION_URL || !CONTROLLER_URL || !KUBECONFIG) {
    throw new Error(`${envFile} lacks the services' URLs or KUBECONFIG: is the stack running?`);
  }
  const key = await ensureDevSigningKey(stateDir);
  const kubectl = (await resolveToolPaths()).kubectl;
  return {
    aclUrl: ACL_URL,
    decisionUrl: DECISION_URL,
    controllerUrl: CONTROLLER_URL,
    token: (sub, options) => mintToken(key, { sub, ...options, ttlSeconds: TOKEN_TTL_SECONDS }),
    catalog: async () => {
      const args = ['--kubeconfig', KUBECONFIG, 'get', 'catalogitems', '-o', 'json'];
      const { stdout } = await run(kubectl, args);
      return (JSON.parse(stdout) as { items: CatalogItem[] }).items.map((item) => item.spec);
    },
  };
}

/** The report's last summary line, e.g. `1234 generated, 1234 passed in 5m`. */
function summaryLine(output: string): string {
  return (
    output
      .match(/^.*\d+ generated, .*$/gm)
      ?.at(-1)
      ?.trim() ?? 'no summary line (see the report)'
  );
}

async function explore(plan: Exploration): Promise<boolean> {
  const binary = await schemathesisBinary();
  const stack = await runningStack(plan.stateDir);
  const results: string[] = [];
  let clean = true;
  for (const name of plan.documents) {
    for (const seed of plan.seeds) {
      const document = CONTRACT_DOCUMENTS[name];
      processOutput.out(`\n== ${document.title}: seed ${seed}, ${plan.examplesPerOperation} examples\n`);
      const outcome = await runSchemathesis(binary, {
        ...(await document.target(stack)),
        seed,
        examplesPerOperation: plan.examplesPerOperation,
        onOutput: (chunk) => process.stdout.write(chunk),
      });
      clean &&= outcome.exitCode === 0;
      results.push(
        `${name} seed ${seed}: exit ${outcome.exitCode}, ${summaryLine(outcome.output)} (${outcome.reportFile})`,
      );
    }
  }
  processOutput.out(`\n${results.join('\n')}\n`);
  return clean;
}

async function main(): Promise<void> {
  const commandLine = readCommandLine(
    process.argv.slice(2),
    {
      seed: { type: 'string', multiple: true },
      'max-examples': { type: 'string' },
      document: { type: 'string', multiple: true },
      dir: { type: 'string' },
    },
    USAGE,
    processOutput,
  );
  if ('exitCode' in commandLine) {
    process.exitCode = commandLine.exitCode;
    return;
  }
  const plan = exploration(commandLine.values);
  if (typeof plan === 'string') {
    processOutput.err(`${plan}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  process.exitCode = (await explore(plan)) ? 0 : 1;
}

runIfEntrypoint(import.meta.url, 'contract-explore', main);
