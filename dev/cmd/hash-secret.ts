import { runHashSecretCli } from '../cli/hash-secret-cli.js';

// printf %s "$SECRET" | npm run --silent hash-secret -- [--role <role>]... [--user-id <uuid>] [--org <uuid>]
// prints the value of one application's key in the Basic credentials Secret (BASIC_CREDENTIALS_DIR).
process.exitCode = await runHashSecretCli(process.argv.slice(2), process.stdin);
