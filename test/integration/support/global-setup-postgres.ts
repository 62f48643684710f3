import { integrationSetup } from './global-setup.js';

/** The `integration-postgres` project: the same parts, SpiceDB on PostgreSQL as in production. */
export default integrationSetup('postgres');
