import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHART_DIR, REPO_ROOT, TEMPLATE_KUBE_VERSION } from '../../../hack/sync-packaging.js';
import {
  EXAMPLE_PAGES,
  UPGRADE_PAGES,
  fencedBlocks,
  helmCommands,
  isValuesExample,
  shellCommands,
  type FencedBlock,
  type HelmCommand,
} from './documented-examples.js';
import { packagingTools, parseManifests } from './packaging-support.js';

// Every Helm example a reader copies from README.md, docs/install.md, docs/upgrade.md, docs/production.md and the
// chart README renders: each `helm install`/`upgrade`/`template` of a shell block as written (what the reader fills in, such as
// `<your registry>` or "$SPICEDB_KEY", as example words), and each YAML block of chart values on top of its page's
// first install. A documented example the chart refuses fails here.

const run = promisify(execFile);

interface Example {
  name: string;
  command: HelmCommand;
}

const blocks = [...EXAMPLE_PAGES, ...Object.keys(UPGRADE_PAGES)].flatMap((page) => fencedBlocks(page));

/**
 * The page's first `helm install` (an upgrade page's: its install page's): what a values example or an upgrade
 * reusing the release's values adds to.
 */
function installOf(page: string): HelmCommand {
  const installPage = UPGRADE_PAGES[page] ?? page;
  const install = blocks
    .filter((block) => block.page === installPage)
    .flatMap(helmCommands)
    .find((command) => command.verb === 'install');
  if (!install) throw new Error(`${page} has a values example but no helm install to add it to`);
  return install;
}

function exampleOf(block: FencedBlock): Example[] {
  const name = `${block.page}:${block.line}`;
  if (isValuesExample(block)) {
    const install = installOf(block.page);
    return [{ name, command: { ...install, flags: [...install.flags, '--values', `inline:${block.line}`] } }];
  }
  return helmCommands(block).map((command) => ({
    name,
    command: command.reusesValues
      ? { ...command, flags: [...installOf(block.page).flags, ...command.flags] }
      : command,
  }));
}

const examples = blocks.flatMap(exampleOf);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pgo-documented-examples-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * The command's flags with their files in place: a values example's text, and, for a --set-file naming the reader's
 * own file (not one of the repository), a file of example text.
 */
async function withFiles(flags: string[], page: string): Promise<string[]> {
  return Promise.all(
    flags.map(async (flag, index) => {
      const option = flags[index - 1];
      if (flag.startsWith('inline:')) {
        const block = blocks.find(
          (candidate) => candidate.page === page && `inline:${candidate.line}` === flag,
        );
        const path = join(dir, `${page.replaceAll('/', '-')}-${block?.line}.yaml`);
        await writeFile(path, block?.text ?? '');
        return path;
      }
      if (option !== '--set-file') return flag;
      const [key, file = ''] = flag.split('=');
      if (existsSync(join(REPO_ROOT, file))) return flag;
      const path = join(dir, file.replaceAll('/', '-'));
      await writeFile(path, '{"keys":[]}');
      return `${key}=${path}`;
    }),
  );
}

async function render({ name, command }: Example) {
  const { helm } = await packagingTools();
  const flags = await withFiles(command.flags, name.split(':')[0] ?? '');
  const args = ['template', command.release, CHART_DIR, '--namespace', 'policy-grant-system'];
  args.push('--kube-version', TEMPLATE_KUBE_VERSION, ...flags);
  const { stdout } = await run(helm, args, { cwd: REPO_ROOT, maxBuffer: 16 << 20 }).catch(
    (error: { stderr?: string }) => {
      throw new Error(`${name} does not render: ${error.stderr ?? String(error)}`);
    },
  );
  return parseManifests(stdout);
}

describe('the Helm examples of the docs', () => {
  it('are found: each page has an install, and the production example is among them', () => {
    for (const page of EXAMPLE_PAGES)
      expect(
        examples.some((example) => example.name.startsWith(`${page}:`) && example.command.verb === 'install'),
        page,
      ).toBe(true);
    for (const page of Object.keys(UPGRADE_PAGES))
      expect(
        examples.some((example) => example.name.startsWith(`${page}:`) && example.command.verb === 'upgrade'),
        page,
      ).toBe(true);
    expect(examples.map((example) => example.command.flags.join(' ')).join('\n')).toContain(
      'charts/policy-grant-operator/examples/production.yaml',
    );
  });

  it.each(examples.map((example) => [example.name, example] as const))(
    '%s renders',
    async (_name, example) => {
      expect(example.command.chart).toBe('charts/policy-grant-operator');
      const objects = await render(example);
      expect(objects.some((object) => object.kind === 'Deployment')).toBe(true);
    },
  );

  it("create the audit database Secret with both connection strings: the services' url and the owner's migrationUrl", () => {
    const creates = blocks
      .flatMap((block) =>
        ['sh', 'bash'].includes(block.language) ? shellCommands(block.text.replace(/\\\n/g, ' ')) : [],
      )
      .filter((words) => words.includes('secret') && words.some((word) => word.endsWith('audit-database')));
    expect(creates.length).toBeGreaterThan(0);
    for (const words of creates) {
      expect(
        words.some((word) => word.startsWith('--from-literal=url=')),
        words.join(' '),
      ).toBe(true);
      expect(
        words.some((word) => word.startsWith('--from-literal=migrationUrl=')),
        words.join(' '),
      ).toBe(true);
    }
  });
});
