import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers of src/, top first (CONTRIBUTING.md, "Layout"): a folder imports only the folders of the rows
// below its own, and a peer of its row only where PEER_IMPORTS allows it.
const LAYERS = [
  ['cmd', 'kubectl-grants'],
  ['acl', 'controller', 'decision'],
  ['config'],
  ['runtime', 'http'],
  ['auth'],
  ['verdict'],
  ['spicedb', 'audit', 'kube'],
  ['api', 'observability'],
];
const PEER_IMPORTS = { acl: ['decision'] };

function layerRules() {
  return LAYERS.flatMap((row, index) =>
    row.map((folder) => {
      const above = LAYERS.slice(0, index).flat();
      const peers = row.filter((peer) => peer !== folder && !(PEER_IMPORTS[folder] ?? []).includes(peer));
      const forbidden = [...above, ...peers, 'dev'];
      return {
        files: [`src/${folder}/**/*.ts`],
        rules: {
          'no-restricted-imports': [
            'error',
            {
              patterns: [
                {
                  regex: `^(\\.\\./)+(${forbidden.join('|')})/`,
                  message: `src/${folder} imports only the layers below it (CONTRIBUTING.md, "Layout").`,
                },
              ],
            },
          ],
        },
      };
    }),
  );
}

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.dev/', '.cluster/', '.cache/', 'charts/', 'coverage/'] },
  eslint.configs.recommended,
  ...tseslint.configs.strict,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  ...layerRules(),
);
