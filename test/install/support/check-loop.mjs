/* global process, fetch, console */
// Runs inside a pod of the cluster, on the project's image (`node --input-type=module -e <this file>`): asks the
// decision service's Service for checks, one after another on a keep-alive connection as a gateway would, until
// the file STOP_FILE appears (or MAX_MS passes), then prints what it saw as one JSON line. Every answer but a 200
// is a failure, and so is every request that got no answer.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const { CHECK_URL, CHECK_BODY, CHECK_TOKEN, STOP_FILE } = process.env;
const MAX_MS = Number(process.env.MAX_MS ?? 600_000);
const started = Date.now();
let answered = 0;
const failures = [];

while (!existsSync(STOP_FILE) && Date.now() - started < MAX_MS) {
  try {
    const response = await fetch(CHECK_URL, {
      method: 'POST',
      headers: { authorization: `Bearer ${CHECK_TOKEN}`, 'content-type': 'application/json' },
      body: CHECK_BODY,
    });
    await response.text();
    if (response.status === 200) {
      if (answered++ === 0) console.log('first answer');
    } else {
      failures.push(`HTTP ${response.status}`);
    }
  } catch (error) {
    failures.push(String(error?.cause?.code ?? error?.message ?? error));
  }
  await sleep(20);
}
console.log(
  JSON.stringify({
    answered,
    failed: failures.length,
    failures: failures.slice(0, 20),
    stopped: existsSync(STOP_FILE),
  }),
);
