import { isEntrypoint } from './process-lifecycle.js';

/**
 * The one entrypoint of the container image: `node dist/cmd/main.js <service> [args...]` starts one service
 * (or runs the audit schema's migrations, `audit-migrate`, a step of its own). Each one's module sits beside
 * this file under its name and exports `main`.
 */
export const SERVICES = ['acl-api', 'controller', 'decision-service'] as const;
/** Every name the image's entrypoint takes: the services and the steps that run once and exit. */
export const COMMANDS = [...SERVICES, 'audit-migrate'] as const;
export type Service = (typeof COMMANDS)[number];

export interface Entrypoint {
  main?: (argv: string[]) => unknown;
}

export type LoadEntrypoint = (service: Service) => Promise<Entrypoint>;

export const USAGE = `Usage: node dist/cmd/main.js <${COMMANDS.join('|')}> [args...]\n`;

// Resolved at run time, so that only the chosen service's module (and its dependencies) is loaded.
const importEntrypoint: LoadEntrypoint = (service) => {
  const moduleUrl = new URL(`./${service}.js`, import.meta.url).href;
  return import(moduleUrl);
};

function isService(name: string | undefined): name is Service {
  return (COMMANDS as readonly (string | undefined)[]).includes(name);
}

/** Starts the service `argv[0]` names and answers undefined; answers 2 (usage error) for anything else. */
export async function runService(
  argv: readonly string[],
  load: LoadEntrypoint = importEntrypoint,
  writeError: (text: string) => void = (text) => process.stderr.write(text),
): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (!isService(name)) {
    writeError(
      `${name === undefined ? 'no service named' : `unknown service ${JSON.stringify(name)}`}\n${USAGE}`,
    );
    return 2;
  }
  const { main } = await load(name);
  // Never a silent no-op: a module that does not export main would leave the container idle and "healthy".
  if (typeof main !== 'function') throw new Error(`src/cmd/${name}.ts does not export a main function`);
  await main(rest);
  return undefined;
}

if (isEntrypoint(import.meta.url)) {
  // As each entrypoint does on its own: the message (a configuration error names the variable), exit code 1.
  runService(process.argv.slice(2)).then(
    (exitCode) => {
      if (exitCode !== undefined) process.exitCode = exitCode;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
