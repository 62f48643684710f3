import { loadAllYaml } from '@kubernetes/client-node';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Every object of the YAML files in `dir`, files in name order. */
export async function readManifests(dir: string): Promise<unknown[]> {
  const files = (await readdir(dir)).filter((file) => /\.ya?ml$/.test(file)).sort();
  const documents = await Promise.all(
    files.map(async (file) => loadAllYaml(await readFile(join(dir, file), 'utf8'))),
  );
  return documents.flat().filter(Boolean);
}
