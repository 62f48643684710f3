import { POLL_TIMEOUT_MS } from '../../dev/wait/until.js';

// vitest's budgets, sized for the loaded machine POLL_TIMEOUT_MS is sized for (dev/wait/until.ts): polls of
// another process (a controller, the API server, SpiceDB, an informer's cache) wait that long by default, and
// vitest's own defaults come from here.

/** A test's budget: several polls, each up to POLL_TIMEOUT_MS, must fit, so that a failing poll names its cause. */
export const TEST_TIMEOUT_MS = 4 * POLL_TIMEOUT_MS;

/** A hook's budget: hooks start processes (SpiceDB, a controller, the development stack) and wait for them. */
export const HOOK_TIMEOUT_MS = 5 * POLL_TIMEOUT_MS;

/** The lifetime of a grant a test watches expire: long enough for it to be enforced first on a loaded machine. */
export const SHORT_LIFETIME_MS = 15_000;
