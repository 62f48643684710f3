import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The parts of an OCI image configuration the cluster's images set. */
export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
}

/**
 * Writes `rootfs` as a one-layer OCI image archive (oci-layout, index.json, blobs) named `name`, the format
 * `ctr images import` and `buildah pull oci-archive:` read: no daemon, no registry. Files are owned by root in
 * the layer whatever their owner here; modes are kept.
 */
export async function writeOciArchive(
  rootfs: string,
  name: string,
  config: ImageConfig,
  archive: string,
): Promise<void> {
  const layout = `${archive}.layout`;
  const blobs = join(layout, 'blobs', 'sha256');
  await rm(layout, { recursive: true, force: true });
  await mkdir(blobs, { recursive: true });
  const layerTar = join(layout, 'layer.tar');
  await run('tar', ['--numeric-owner', '--owner=0', '--group=0', '-C', rootfs, '-cf', layerTar, '.']);
  const layer = await blob(blobs, layerTar);
  const imageConfig = await blobOf(blobs, {
    architecture: 'amd64',
    os: 'linux',
    config,
    rootfs: { type: 'layers', diff_ids: [`sha256:${layer.digest}`] },
  });
  const manifest = await blobOf(blobs, {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.manifest.v1+json',
    config: descriptor('application/vnd.oci.image.config.v1+json', imageConfig),
    layers: [descriptor('application/vnd.oci.image.layer.v1.tar', layer)],
  });
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  await writeFile(
    join(layout, 'index.json'),
    JSON.stringify({
      schemaVersion: 2,
      manifests: [
        {
          ...descriptor('application/vnd.oci.image.manifest.v1+json', manifest),
          annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name },
        },
      ],
    }),
  );
  await run('tar', ['-C', layout, '-cf', archive, 'oci-layout', 'index.json', 'blobs']);
  await rm(layout, { recursive: true, force: true });
}

interface Blob {
  digest: string;
  size: number;
}

function descriptor(mediaType: string, { digest, size }: Blob) {
  return { mediaType, digest: `sha256:${digest}`, size };
}

async function blob(blobs: string, file: string): Promise<Blob> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  const digest = hash.digest('hex');
  const { size } = await stat(file);
  await copyFile(file, join(blobs, digest));
  await rm(file);
  return { digest, size };
}

async function blobOf(blobs: string, value: unknown): Promise<Blob> {
  const bytes = Buffer.from(JSON.stringify(value));
  const digest = createHash('sha256').update(bytes).digest('hex');
  await writeFile(join(blobs, digest), bytes);
  return { digest, size: bytes.length };
}

/**
 * Copies `binary` to `target` inside `rootfs` with every shared library it links (as `ldd` lists them, the
 * dynamic loader included), each at its own path: a root filesystem that runs the binary and holds nothing else.
 */
export async function copyWithLibraries(
  binary: string,
  rootfs: string,
  target: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  await copyInto(rootfs, binary, target);
  for (const library of await sharedLibraries(binary, env)) await copyInto(rootfs, library, library);
}

async function sharedLibraries(binary: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const { stdout } = await run('ldd', [binary], { env }).catch((error: { stdout?: string }) => ({
    // A static binary: ldd says so and exits 1.
    stdout: error.stdout ?? '',
  }));
  return [...stdout.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)].map((match) => match[1] as string);
}

async function copyInto(rootfs: string, source: string, target: string): Promise<void> {
  const destination = join(rootfs, target);
  await mkdir(dirname(destination), { recursive: true });
  // The file a symlink names, under the link's name: the loader finds it by that name.
  await writeFile(destination, await readFile(source), { mode: (await stat(source)).mode });
}
