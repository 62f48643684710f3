import type { V1Namespace } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalControlPlane, type LocalControlPlane } from '../../../dev/localplane/control-plane.js';
import { freePort } from '../../../dev/localplane/free-port.js';
import { startSpiceDB } from '../../../dev/localplane/spicedb-server.js';
import { resolveToolPaths, type ToolPaths } from '../../../dev/localplane/tool-paths.js';
import { KubeClient, NAMESPACE_RESOURCE } from '../../../src/kube/index.js';
import { uniqueId } from '../support/cluster.js';
import { TestObjects } from '../support/objects.js';
import { childProcesses, childrenStartedSince } from './child-processes.js';
import { occupyPort } from './occupied-port.js';

let tools: ToolPaths;
const folders: string[] = [];

beforeAll(async () => {
  tools = await resolveToolPaths();
});

afterAll(async () => {
  await Promise.all(folders.map((folder) => rm(folder, { recursive: true, force: true })));
});

/** Runs `use` with the objects of `plane`'s API server; the client is closed after. */
async function withObjects<T>(
  plane: LocalControlPlane,
  use: (objects: TestObjects) => Promise<T>,
): Promise<T> {
  const kube = new KubeClient(plane.kubeConfig());
  try {
    return await use(new TestObjects(kube));
  } finally {
    kube.close();
  }
}

async function stateFolder(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'policy-grant-plane-'));
  folders.push(folder);
  return folder;
}

describe('the local control plane, started again on the same state folder', () => {
  it('comes up with the data of the previous start', { timeout: 300_000 }, async () => {
    const stateDir = await stateFolder();
    const namespace = uniqueId('kept');
    const first = await startLocalControlPlane({ stateDir, tools });
    try {
      const processes = first.processes();
      expect(processes.map((child) => child.name)).toEqual(['etcd', 'kube-apiserver', 'spicedb']);
      expect(processes.every((child) => child.isRunning())).toBe(true);
      await withObjects(first, (objects) =>
        objects.create(NAMESPACE_RESOURCE, { metadata: { name: namespace } }),
      );
    } finally {
      await first.stop();
    }

    const second = await startLocalControlPlane({ stateDir, tools });
    try {
      const kept = await withObjects(second, (objects) =>
        objects.get<V1Namespace>(NAMESPACE_RESOURCE, namespace),
      );
      expect(kept.metadata?.name).toBe(namespace);
      expect(second.apiServerUrl).not.toBe(first.apiServerUrl);
    } finally {
      await second.stop();
    }
  });
});

describe('a start that fails', () => {
  it('stops etcd and SpiceDB when kube-apiserver exits at once, and leaves no kubeconfig', async () => {
    const stateDir = await stateFolder();
    const stale = join(stateDir, 'kubeconfig');
    await writeFile(stale, 'left by an earlier run\n');
    const failing = join(stateDir, 'kube-apiserver-that-fails');
    await writeFile(failing, '#!/bin/sh\necho "Error: unknown flag: --etcd-servers" >&2\nexit 2\n');
    await chmod(failing, 0o755);
    const before = await childProcesses();

    await expect(
      startLocalControlPlane({ stateDir, tools: { ...tools, kubeApiserver: failing } }),
    ).rejects.toThrow(/kube-apiserver exited with 2;[^]*unknown flag: --etcd-servers/);

    expect(await childrenStartedSince(before)).toEqual([]);
    expect(existsSync(stale)).toBe(false);
  });

  it('names SpiceDB and its log when its port is taken, and leaves no process', async () => {
    const stateDir = await stateFolder();
    const port = await freePort();
    const blocker = await occupyPort(port);
    const before = await childProcesses();
    try {
      await expect(startSpiceDB({ binary: tools.spicedb, stateDir, port })).rejects.toThrow(
        /spicedb exited with \d+;[^]*address already in use/,
      );
      expect(await childrenStartedSince(before)).toEqual([]);
    } finally {
      await blocker.release();
    }
  });
});
