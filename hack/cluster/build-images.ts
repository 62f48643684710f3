/**
 * Builds the cluster's images into `<stateDir>/images` (run on the machine's network: the Dockerfile's build
 * stages install npm packages). Usage: tsx hack/cluster/build-images.ts <stateDir>
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildImages } from './images.js';
import { resolveClusterTools } from './node-cluster.js';

const stateDir = process.argv[2];
if (!stateDir) throw new Error('usage: build-images.ts <stateDir>');
const started = Date.now();
const names = await buildImages(stateDir, await resolveClusterTools(), (message) =>
  console.error(`[cluster] ${message}`),
);
await writeFile(join(stateDir, 'images.json'), JSON.stringify(names, null, 2));
console.error(`[cluster] images built in ${Math.round((Date.now() - started) / 1000)} s`);
