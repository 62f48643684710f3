import { z } from 'zod';

/** How the ACL API and the decision service leave their Service on SIGTERM (docs/install.md, "Rollouts"). */
export const shutdownEnvironment = z.object({
  /**
   * Seconds between SIGTERM (readiness fails at once) and the listener closing, while endpoints controllers
   * and kube-proxies take the replica out of rotation; 0 closes at once.
   */
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().int().min(0).max(300).default(0),
});

export type ShutdownEnvironment = z.output<typeof shutdownEnvironment>;

export function drainMs(env: ShutdownEnvironment): number {
  return env.SHUTDOWN_DRAIN_SECONDS * 1_000;
}
