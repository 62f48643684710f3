import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPinnedTools } from '../../../dev/localplane/tool-paths.js';
import { repoRoot } from '../../../dev/localplane/repo-root.js';

/**
 * The checks every document must pass. use_after_free and ensure_resource_availability are left out on
 * purpose: a revoked grant or delegation stays readable with status DELETED (a soft delete), which those two
 * checks take for a resource that should be gone.
 */
export const CONTRACT_CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'positive_data_acceptance',
  'missing_required_header',
  'unsupported_method',
  'allow_header_conformance',
  'ignored_auth',
] as const;

/** The rules the documents state in descriptions only; schemathesis loads them as hooks. */
const SEMANTIC_RULES = join(repoRoot(), 'test/contract/semantic_rules.py');

export interface ContractRun {
  /** The service's GET /docs. */
  documentUrl: string;
  /** Sent with every request, e.g. `authorization: Bearer …`. */
  headers: Readonly<Record<string, string>>;
  /** Environment of the hooks (semantic_rules.py), e.g. the stack's catalog. */
  hookEnv?: Readonly<Record<string, string>>;
  seed: string;
  examplesPerOperation: number;
  /** Sees the console report as it is written (an exploring run streams it); it is collected either way. */
  onOutput?: (chunk: Buffer) => void;
}

export interface ContractOutcome {
  exitCode: number | null;
  /** The whole console report, also kept in `reportFile`. */
  output: string;
  reportFile: string;
}

/** SCHEMATHESIS_BIN, or the pinned one of the tools cache (installed by hack/tools/build.sh when missing). */
export async function schemathesisBinary(): Promise<string> {
  const explicit = process.env.SCHEMATHESIS_BIN;
  if (explicit) return explicit;
  const exported = (await buildPinnedTools()).SCHEMATHESIS_BIN;
  if (!exported) throw new Error('hack/tools/env.sh did not export SCHEMATHESIS_BIN');
  return exported;
}

/** `st run` with every contract check and the stateful phase (links), fixed seed and example budget. */
export async function runSchemathesis(binary: string, run: ContractRun): Promise<ContractOutcome> {
  const args = [
    'run',
    run.documentUrl,
    '--checks',
    CONTRACT_CHECKS.join(','),
    '--max-examples',
    String(run.examplesPerOperation),
    '--seed',
    run.seed,
    '--workers',
    '2',
    // A 10000-member snapshot takes seconds on two loaded cores: schemathesis's default of 10 s is too short.
    '--request-timeout',
    '120',
    '--no-color',
    ...Object.entries(run.headers).flatMap(([name, value]) => ['--header', `${name}: ${value}`]),
  ];
  const directory = await mkdtemp(join(tmpdir(), 'policy-grant-contract-'));
  // PYTHONIOENCODING: the report prints the generated strings, whatever the locale of the machine.
  const env = {
    ...process.env,
    ...run.hookEnv,
    SCHEMATHESIS_HOOKS: SEMANTIC_RULES,
    PYTHONIOENCODING: 'utf-8',
  };
  const output = await collect(binary, args, { cwd: directory, env }, run.onOutput);
  const reportFile = join(directory, 'schemathesis.txt');
  await writeFile(reportFile, output.text);
  return { exitCode: output.exitCode, output: output.text, reportFile };
}

function collect(
  binary: string,
  args: string[],
  place: { cwd: string; env: NodeJS.ProcessEnv },
  onOutput: (chunk: Buffer) => void = () => undefined,
): Promise<{ exitCode: number | null; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, args, {
      ...place,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    const keep = (chunk: Buffer) => {
      chunks.push(chunk);
      onOutput(chunk);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, text: Buffer.concat(chunks).toString('utf8') }));
  });
}

/** The part of a report a reader needs: the failures and errors, then the summary (the report's tail). */
export function readableFailures(outcome: ContractOutcome): string {
  const start = outcome.output.search(/^=+ (ERRORS|FAILURES) =+$/m);
  const relevant = start >= 0 ? outcome.output.slice(start) : outcome.output;
  const limit = 20_000;
  const shown = relevant.length > limit ? `…${relevant.slice(-limit)}` : relevant;
  return `schemathesis exited with ${outcome.exitCode}; whole report: ${outcome.reportFile}\n${shown}`;
}
