import { runDevTokenCli } from '../cli/dev-token-cli.js';

// npm run --silent token -- --sub <uuid> [--role <role>]... [--org <uuid>]
process.exitCode = await runDevTokenCli(process.argv.slice(2));
