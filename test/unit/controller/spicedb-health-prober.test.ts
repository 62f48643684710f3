import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/runtime/logger.js';
import { SpiceDBHealthProber } from '../../../src/controller/spicedb-health-prober.js';
import { SpiceDBError, SpiceDBUnavailableError } from '../../../src/spicedb/errors.js';
import { sleep } from '../../../dev/wait/sleep.js';

/** SpiceDB's health and schema, as the prober sees them. */
class FakeSchemaStore {
  schema: string | undefined;
  down = false;
  writes = 0;
  probes = 0;

  async health(): Promise<{ schemaWritten: boolean }> {
    this.probes += 1;
    if (this.down) throw new SpiceDBUnavailableError('ReadSchema', 14, 'connection refused');
    return { schemaWritten: this.schema !== undefined };
  }

  async ensureSchema(schema: string): Promise<{ written: boolean }> {
    if (this.down) throw new SpiceDBUnavailableError('DiffSchema', 14, 'connection refused');
    if (this.schema === schema) return { written: false };
    this.schema = schema;
    this.writes += 1;
    return { written: true };
  }
}

function setUp(store = new FakeSchemaStore(), leadership = { leading: true }) {
  const recoveries: string[] = [];
  const prober = new SpiceDBHealthProber({
    store,
    ensureSchema: () => store.ensureSchema('definition user {}'),
    isLeader: () => leadership.leading,
    periodMs: 60_000,
    logger: silentLogger,
    onRecovered: (why) => recoveries.push(why),
  });
  return { store, prober, recoveries };
}

describe('SpiceDBHealthProber', () => {
  it('writes the schema at start-up, and counts a SpiceDB without schema as disrupted', async () => {
    const { store, prober, recoveries } = setUp();
    await prober.start();
    await prober.stop();
    expect(store.schema).toBe('definition user {}');
    expect(prober.isAvailable()).toBe(true);
    expect(prober.wasDisrupted()).toBe(true);
    expect(recoveries).toEqual([]);
  });

  it('writes nothing and trusts statuses when SpiceDB already has the schema', async () => {
    const store = new FakeSchemaStore();
    store.schema = 'definition user {}';
    const { prober } = setUp(store);
    await prober.start();
    await prober.stop();
    expect(store.writes).toBe(0);
    expect(prober.wasDisrupted()).toBe(false);
  });

  it('notices a SpiceDB that came back empty: writes the schema again and reports schema-lost', async () => {
    const { store, prober, recoveries } = setUp();
    await prober.start();
    store.schema = undefined; // a memory datastore restarted between two probes
    prober.nudge();
    await prober.stop();
    expect(store.writes).toBe(2);
    expect(recoveries).toEqual(['schema-lost']);
  });

  it('reports an outage once SpiceDB answers again', async () => {
    const store = new FakeSchemaStore();
    store.schema = 'definition user {}';
    const { prober, recoveries } = setUp(store);
    await prober.start();
    store.down = true;
    prober.nudge();
    await sleep(5);
    expect(prober.isAvailable()).toBe(false);
    store.down = false;
    prober.nudge();
    await prober.stop();
    expect(recoveries).toEqual(['outage']);
    expect(prober.wasDisrupted()).toBe(true);
  });

  it('keeps running when SpiceDB is unreachable at start-up, and recovers later', async () => {
    const store = new FakeSchemaStore();
    store.down = true;
    const { prober, recoveries } = setUp(store);
    await prober.start();
    expect(prober.isAvailable()).toBe(false);
    store.down = false;
    prober.nudge();
    await prober.stop();
    expect(store.schema).toBe('definition user {}');
    expect(recoveries).toEqual(['schema-lost']);
  });

  it('does not take a refused call for an outage', async () => {
    const store = new FakeSchemaStore();
    store.schema = 'definition user {}';
    const { prober, recoveries } = setUp(store);
    await prober.start();
    const answer = store.health.bind(store);
    store.health = () => {
      store.probes += 1;
      return Promise.reject(new SpiceDBError('ReadSchema', 3, 'invalid argument'));
    };
    prober.nudge();
    await sleep(5);
    expect(store.probes).toBe(2); // the refused probe did happen
    expect(prober.isAvailable()).toBe(true);
    store.health = answer;
    prober.nudge();
    await prober.stop();
    expect(store.probes).toBe(3);
    // Had the refusal counted as an outage, this answer would be reported as a recovery from it.
    expect(recoveries).toEqual([]);
  });

  it('lets only the leader write the schema; a replica that does not lead only probes', async () => {
    const leadership = { leading: false };
    const { store, prober, recoveries } = setUp(new FakeSchemaStore(), leadership);
    await prober.start();
    prober.nudge();
    await sleep(5);
    expect(store.probes).toBe(2);
    expect(store.writes).toBe(0);
    expect(prober.isAvailable()).toBe(true);
    leadership.leading = true;
    prober.nudge();
    await prober.stop();
    expect(store.writes).toBe(1);
    expect(recoveries).toEqual(['schema-lost']);
  });
});
