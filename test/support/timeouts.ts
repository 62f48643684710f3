// How long the tests wait, sized for a loaded machine: CI runs the whole suite on two shared cores, every
// project at once, so a wait that suits an idle laptop times out there (a run beside other suites has seen a
// controller take over 30 s to write a status). Every poll of another process (a controller, the API server,
// SpiceDB, an informer's cache) and vitest's own defaults take their figures from here; a poll that succeeds
// returns at once, so only a failing test pays for the patience.

/** How long a test waits for another process to do what it must (a poll's timeout). */
export const PATIENCE_MS = 60_000;

/** A test's budget: several waits, each up to PATIENCE_MS, must fit, so that a failing poll names its cause. */
export const TEST_TIMEOUT_MS = 240_000;

/** A hook's budget: hooks start processes (SpiceDB, a controller, the development stack) and wait for them. */
export const HOOK_TIMEOUT_MS = 300_000;

/** The lifetime of a grant a test watches expire: long enough for it to be enforced first on a loaded machine. */
export const SHORT_LIFETIME_MS = 15_000;
