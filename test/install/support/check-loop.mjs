/* global process, fetch, console */
// Runs inside a pod of the cluster, on the project's image (`node --input-type=module -e <this file>`): asks the
// decision service's Service for checks, one after another on a keep-alive connection as a gateway would, until
// the file STOP_FILE appears (or MAX_MS passes), then prints what it saw as one JSON line.
// CHECKS is a JSON list of {body, allowed?}: each round asks every one of them. A check fails when it gets no
// answer, an answer other than 200 (recorded with the problem it names), or a decision other than `allowed` (a deny where an allow is due: failed
// closed); an allow where `allowed` is false is a violation, counted apart. Once a second it prints its progress,
// and whether its latest round failed (`failing`); its outages are the spans of consecutive failed rounds, with
// the checks that failed in each.
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const { CHECK_URL, CHECK_TOKEN, STOP_FILE } = process.env;
const MAX_MS = Number(process.env.MAX_MS ?? 600_000);
const checks = JSON.parse(process.env.CHECKS);
const started = Date.now();
let answered = 0;
let violations = 0;
const failures = [];
const outages = [];
let outage;
let reported = started;

/** An error answer's problem detail (the cause it names), else the start of its body. */
function problemOf(text) {
  try {
    const body = JSON.parse(text);
    return body.detail ?? body.title ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200);
  }
}

/** What one check got: undefined when right, else why it failed. */
async function ask({ body, allowed }) {
  try {
    const response = await fetch(CHECK_URL, {
      method: 'POST',
      headers: { authorization: `Bearer ${CHECK_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) return `HTTP ${response.status}: ${problemOf(text)}`;
    if (answered++ === 0) console.log('first answer');
    const decision = JSON.parse(text).result?.allowed;
    if (allowed === false && decision === true) violations += 1;
    if (allowed !== undefined && decision !== allowed) return decision ? 'allowed' : 'denied';
    return undefined;
  } catch (error) {
    return String(error?.cause?.code ?? error?.message ?? error);
  }
}

function record(now, failed) {
  if (failed.length > 0) {
    failures.push(...failed);
    outage ??= { from: now, to: now, failed: 0 };
    outage.to = now;
    outage.failed += failed.length;
  } else if (outage) {
    outages.push(outage);
    outage = undefined;
  }
}

while (!existsSync(STOP_FILE) && Date.now() - started < MAX_MS) {
  const failed = [];
  for (const check of checks) {
    const why = await ask(check);
    if (why) failed.push(why);
  }
  const now = Date.now();
  record(now, failed);
  if (now - reported >= 1000) {
    reported = now;
    console.log(
      JSON.stringify({ at: now, answered, failed: failures.length, violations, failing: !!outage }),
    );
  }
  await sleep(20);
}
if (outage) outages.push(outage);
console.log(
  JSON.stringify({
    answered,
    failed: failures.length,
    violations,
    failures: failures.slice(0, 20),
    outages,
    stopped: existsSync(STOP_FILE),
  }),
);
