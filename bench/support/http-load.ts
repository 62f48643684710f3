// The load of bench:check-overhead, in a process of its own so that the benchmark's process CPU is the
// servers' alone: one POST body sent again and again over an undici keep-alive pool, `concurrency` loops.
import { Pool } from 'undici';

export interface HttpLoadRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Each request's body with a subject_id of its own (a check no cache has seen). */
  distinctSubjects: boolean;
  concurrency: number;
  requests: number;
}

export interface HttpLoadResult {
  elapsedMs: number;
  /** This process's CPU (the client's) per request. */
  clientCpuMicros: number;
  failed: number;
}

async function load(request: HttpLoadRequest): Promise<HttpLoadResult> {
  const url = new URL(request.url);
  const pool = new Pool(url.origin, { connections: request.concurrency });
  let left = request.requests;
  let failed = 0;
  const check = JSON.parse(request.body) as Record<string, unknown>;
  const bodyOf = (index: number) =>
    request.distinctSubjects
      ? JSON.stringify({ ...check, subject_id: `${process.pid}-${Date.now()}-${index}` })
      : request.body;
  const loop = async () => {
    while (left-- > 0) {
      const response = await pool.request({
        path: url.pathname,
        method: 'POST',
        headers: request.headers,
        body: bodyOf(left),
      });
      await response.body.arrayBuffer();
      if (response.statusCode !== 200) failed += 1;
    }
  };
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: request.concurrency }, loop));
  const elapsedMs = performance.now() - started;
  const { user, system } = process.cpuUsage(cpuBefore);
  await pool.close();
  return { elapsedMs, clientCpuMicros: (user + system) / request.requests, failed };
}

process.on('message', (request: HttpLoadRequest | 'exit') => {
  if (request === 'exit') process.disconnect?.();
  else void load(request).then((result) => process.send?.(result));
});
