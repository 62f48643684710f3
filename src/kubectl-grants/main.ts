import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { loadRegistry } from '../spicedb/registry.js';
import { explain } from '../verdict/explanation.js';
import type { ClusterLister } from '../verdict/cluster-lister.js';
import { readClusterObjects } from './cluster-objects.js';
import { listerOf } from './listed-objects.js';
import { renderExplanation, renderWhoCan, type OutputFormat } from './render.js';
import { checkAssertions, parseSubject, validateManifests } from './validate.js';
import { whoCan } from './who-can.js';

// kubectl grants: why a subject has (or lacks) access, who has it, and offline validation for GitOps CI.
// kubectl runs any `kubectl-grants` executable on PATH as `kubectl grants`.

const USAGE = `Usage:
  kubectl grants explain <user-id | agent:<agent-id>> <item-id> <access-type> [-o table|json|yaml]
  kubectl grants who-can <item-id> [<access-type>] [-o table|json|yaml]
  kubectl grants validate -f <file|dir> [-f ...] [--assert <file>] [-n <namespace>]

Options:
  --kubeconfig <path>     kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)
  --context <name>        kubeconfig context to use
  --acl-namespace <name>  namespace of the ACL API, its Memberships and Delegations (default: policy-grant-system)
  -n, --namespace <name>  validate: namespace of objects that name none (default: default)`;

const DEFAULT_ACL_NAMESPACE = 'policy-grant-system';

/** Thrown for a command line that cannot run: printed with the usage, exit code 2. */
class UsageError extends Error {}

interface Io {
  out(text: string): void;
  err(text: string): void;
}

const OPTIONS = {
  output: { type: 'string', short: 'o', default: 'table' },
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  'acl-namespace': { type: 'string', default: DEFAULT_ACL_NAMESPACE },
  namespace: { type: 'string', short: 'n', default: 'default' },
  filename: { type: 'string', short: 'f', multiple: true },
  assert: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function outputFormat(value: string | undefined): OutputFormat {
  if (value === 'table' || value === 'json' || value === 'yaml') return value;
  throw new UsageError(`-o ${value}: expected table, json or yaml`);
}

function kubeConfigOf(values: Values): KubeConfig {
  const kubeConfig = new KubeConfig();
  if (values.kubeconfig) kubeConfig.loadFromFile(values.kubeconfig);
  else kubeConfig.loadFromDefault();
  if (values.context) kubeConfig.setCurrentContext(values.context);
  return kubeConfig;
}

async function clusterView(values: Values, io: Io): Promise<ClusterLister> {
  const aclNamespace = values['acl-namespace'];
  const { objects, forbidden } = await readClusterObjects(kubeConfigOf(values), aclNamespace);
  for (const path of forbidden) io.err(`warning: may not list ${path}; the answer leaves those objects out`);
  return listerOf(objects, aclNamespace, loadRegistry());
}

async function explainCommand(args: string[], values: Values, io: Io): Promise<number> {
  const [subject, itemId, accessType] = args;
  if (!subject || !itemId || !accessType || args.length > 3)
    throw new UsageError('explain needs <subject> <item-id> <access-type>');
  const format = outputFormat(values.output);
  const view = await clusterView(values, io);
  io.out(
    renderExplanation(
      explain({ subject: parseSubject(subject), itemId, accessType }, view, new Date()),
      format,
    ),
  );
  return 0;
}

async function whoCanCommand(args: string[], values: Values, io: Io): Promise<number> {
  const [itemId, accessType] = args;
  if (!itemId || args.length > 2) throw new UsageError('who-can needs <item-id> [<access-type>]');
  const format = outputFormat(values.output);
  const view = await clusterView(values, io);
  io.out(renderWhoCan(whoCan(view, itemId, accessType, new Date()), format));
  return 0;
}

function validateCommand(args: string[], values: Values, io: Io): number {
  const targets = values.filename ?? [];
  if (targets.length === 0 || args.length > 0) throw new UsageError('validate needs -f <file|dir>');
  const options = {
    namespace: values.namespace,
    aclNamespace: values['acl-namespace'],
    registry: loadRegistry(),
    now: new Date(),
  };
  const { problems, objects } = validateManifests(targets, options);
  if (values.assert) problems.push(...checkAssertions(values.assert, objects, options));
  for (const problem of problems) io.err(problem);
  if (problems.length === 0) io.out(`${targets.join(', ')}: valid`);
  return problems.length === 0 ? 0 : 1;
}

/** Runs one command line; resolves to the exit code. */
export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
    const [command, ...args] = positionals;
    if (values.help || command === undefined) {
      io.out(USAGE);
      return values.help ? 0 : 2;
    }
    switch (command) {
      case 'explain':
        return await explainCommand(args, values, io);
      case 'who-can':
        return await whoCanCommand(args, values, io);
      case 'validate':
        return validateCommand(args, values, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`error: ${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    io.err(`error: ${(error as Error).message}`);
    return 1;
  }
}
