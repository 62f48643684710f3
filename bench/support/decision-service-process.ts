// A decision service alone in a process of its own, for a benchmark that compares builds of two commits: the
// parent (bench:check-overhead --against) sends where SpiceDB is and which JWT keys to accept, and reads this
// process's CPU time between runs. It imports only what every compared commit has, from the tree it was
// compiled in (the benchmark copies this file into the other commit's worktree).
import { pino } from 'pino';
import type { JSONWebKeySet } from 'jose';
import { createJwtVerifier } from '../../src/auth/jwt-verifier.js';
import { decisionRequestLimits } from '../../src/config/rate-limit-config.js';
import { startDecisionService } from '../../src/decision/decision-service.js';

export interface DecisionServiceProcessStart {
  spicedb: { endpoint: string; token: string };
  jwks: JSONWebKeySet;
  issuer: string;
  audience: string;
  /** Requests a minute the check class admits (the limit as shipped, raised past what the load sends). */
  checkLimit: number;
}

/** What the process answers: its URL once started, then its CPU time (µs, user and system) when asked. */
export type DecisionServiceProcessMessage = { url: string } | { cpuMicros: number };

async function start(request: DecisionServiceProcessStart): Promise<void> {
  const bearer = await createJwtVerifier({
    keys: { kind: 'jwks', jwks: request.jwks },
    issuer: request.issuer,
    audience: request.audience,
  });
  const parts = {
    authenticators: { bearer },
    // Production's level; the lines are formatted as in production, then dropped.
    logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
  };
  // The configuration with the live parts in it as well: a compared commit may take them in one object, where
  // this tree takes the configuration (which ignores them) and the parts apart.
  const config = {
    port: 0,
    host: '127.0.0.1',
    spicedb: { ...request.spicedb, transport: 'plaintext' as const },
    limits: decisionRequestLimits({ RATE_LIMIT_CHECK: `${request.checkLimit}/1m` }),
    ...parts,
  };
  const service = await startDecisionService(config, parts);
  process.send?.({ url: service.url } satisfies DecisionServiceProcessMessage);
  process.on('message', (message: 'cpu' | 'exit') => {
    if (message === 'exit') {
      void service.stop().then(() => process.disconnect?.());
      return;
    }
    const { user, system } = process.cpuUsage();
    process.send?.({ cpuMicros: user + system } satisfies DecisionServiceProcessMessage);
  });
}

process.once('message', (request: DecisionServiceProcessStart) => void start(request));
