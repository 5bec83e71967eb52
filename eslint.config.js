// Lint rules that guard correctness, not taste (Prettier owns formatting).
const tseslint = require('typescript-eslint');
const { builtinModules } = require('node:module');

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

module.exports = tseslint.config(
  { ignores: ['lib/**', 'clients/typescript/lib/**', 'node_modules/**', 'coverage/**', 'bench/results/**', 'eslint.config.js', 'jest.config.js'] },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: __dirname } },
    rules: {
      // A forgotten await in a workflow or activity loses errors and ordering.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node built-ins, no I/O libraries,
    // no config or clients, and activities only as types.
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not available in workflow code.' })),
          patterns: [
            { group: ['undici', '**/config', '**/config/**', '**/client', '**/client/**', '**/sandbox/**', '**/temporal/**'], message: 'No I/O, config or clients in workflow code.' },
            { group: ['**/activities/**', '**/supplier/http-client', '**/supplier/token'], allowTypeImports: true, message: 'Import activities and clients as types only (import type).' },
          ],
        },
      ],
    },
  },
);
