import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../hack/sync-packaging.js';
import { machineNpm } from '../../../hack/cluster/images.js';
import { until } from '../../../dev/wait/until.js';

// hack/cluster/cluster.sh as a developer starts it: from `npm run` (the project's node_modules/.bin first on the
// PATH) and in the background (`cluster.sh up &`, stopped with kill -INT).

const DEFAULT_SIGNALS = join(REPO_ROOT, 'hack/cluster/default-signals.sh');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pgo-cluster-script-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs `script` in the background of a non-interactive bash, as `cluster.sh up &` is; resolves its output. */
function inBackground(script: string) {
  const outer = spawn('bash', ['-c', `bash ${script} & echo "pid $!"; wait`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  outer.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const closed = new Promise<void>((resolve) => outer.once('close', () => resolve()));
  return { output: () => output, closed };
}

describe('hack/cluster/cluster.sh', () => {
  it('stops on SIGINT when started in the background, which starts it with SIGINT ignored', async () => {
    const cluster = readFileSync(join(REPO_ROOT, 'hack/cluster/cluster.sh'), 'utf8');
    expect(cluster, 'the reset comes before anything else').toMatch(
      /\nset -euo pipefail\nsource "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/default-signals\.sh"\n/,
    );
    // A script that starts as cluster.sh does and then waits for its child, as `cluster.sh up` waits for the cluster.
    const script = join(dir, 'waits.sh');
    await writeFile(
      script,
      `set -euo pipefail\nsource ${DEFAULT_SIGNALS}\ntrap 'echo stopped; kill $!; exit 0' INT\necho started\nsleep 60 >/dev/null &\nwait $!\n`,
    );
    const run = inBackground(script);
    await until(
      () => /pid \d+/.test(run.output()) && run.output().includes('started'),
      'the script to start',
    );
    const pid = Number(/pid (\d+)/.exec(run.output())?.[1]);
    process.kill(pid, 'SIGINT');
    await run.closed;
    expect(run.output()).toContain('stopped');
  });

  it("finds this machine's npm package with the project's node_modules/.bin first on the PATH", async () => {
    const projectFirst = [join(REPO_ROOT, 'node_modules/.bin'), process.env.PATH].join(delimiter);
    const npm = await machineNpm(projectFirst);
    expect(existsSync(join(npm, 'bin/npm-cli.js'))).toBe(true);
    expect(JSON.parse(await readFile(join(npm, 'package.json'), 'utf8'))).toMatchObject({ name: 'npm' });
  });

  it('names the missing npm when the PATH has none', async () => {
    await expect(machineNpm(dir)).rejects.toThrow('no npm on the PATH');
  });
});
