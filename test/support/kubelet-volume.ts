import { mkdir, readdir, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

let versions = 0;

/**
 * Writes `files` into a Secret or ConfigMap volume at `directory` the way kubelet's atomic writer does: the
 * files go into a new hidden folder, a `..data_tmp` link to it is renamed over `..data` (one atomic step), each
 * key is a link `<key> -> ..data/<key>`, keys no longer present lose their link, and the old folder goes.
 */
export async function writeKubeletVolume(directory: string, files: Record<string, string>): Promise<void> {
  await mkdir(directory, { recursive: true });
  const version = `..${Date.now()}_${++versions}`;
  await mkdir(join(directory, version));
  for (const [name, content] of Object.entries(files))
    await writeFile(join(directory, version, name), content);
  const previous = await readlink(join(directory, '..data')).catch(() => undefined);
  await symlink(version, join(directory, '..data_tmp'));
  await rename(join(directory, '..data_tmp'), join(directory, '..data'));
  for (const name of await readdir(directory)) {
    if (!name.startsWith('.') && !(name in files)) await rm(join(directory, name));
  }
  for (const name of Object.keys(files)) {
    await symlink(join('..data', name), join(directory, name)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
  if (previous) await rm(join(directory, previous), { recursive: true });
}
