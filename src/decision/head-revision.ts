/**
 * Reads SpiceDB's head revision for callers that need one read after they asked: at most one read in flight;
 * a caller that arrives while one is in flight waits for the next, which starts when that one ends, and shares
 * it with everyone else who arrived meanwhile. Under load this is one read per round trip, not one per check.
 */
export function coalescedHeadRevision(read: () => Promise<string>): () => Promise<string> {
  let inFlight: Promise<string> | undefined;
  let next: Promise<string> | undefined;
  const start = (): Promise<string> => {
    const reading = read().finally(() => {
      if (inFlight === reading) inFlight = undefined;
    });
    inFlight = reading;
    return reading;
  };
  return () => {
    if (!inFlight) return start();
    next ??= inFlight
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}
