import type { ToolPaths } from '../../../dev/localplane/tool-paths.js';

/** What the global setup hands to every integration test file. */
export interface ControlPlaneInfo {
  kubeconfigPath: string;
  spicedbEndpoint: string;
  spicedbToken: string;
  /** Empty when running against an existing cluster. */
  stateDir: string;
  logFiles: string[];
  tools: Partial<ToolPaths>;
  /** A PostgreSQL superuser's connection string; test files make databases of their own (testDatabase()). */
  postgresUrl: string;
  /** SpiceDB's datastore in this run: the shared SpiceDB's, and that of the SpiceDBs test files start. */
  spicedbDatastore: 'memory' | 'postgres';
}

declare module 'vitest' {
  export interface ProvidedContext {
    controlPlane: ControlPlaneInfo;
  }
}
