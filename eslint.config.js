import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Only the subprocess wrapper starts processes. The import layering, the absence of cycles and the
 * pure modules' no-I/O rule are dependency-cruiser's (.dependency-cruiser.cjs, in `npm run lint`). */
const SUBPROCESS = ['execa', 'child_process', 'node:child_process'];

/**
 * Functions in src/ and workers/ stay readable on one screen: at most 60 lines, every line counted
 * (blank lines and comments too: they are read as well), IIFEs included. A declarative table written
 * as a function may be exempted by name in TABLES; LONG_FUNCTIONS names files whose
 * functions may be longer (it is empty).
 */
const MAX_FUNCTION_LINES = ['error', { max: 60, skipBlankLines: false, skipComments: false, IIFEs: true }];
const TABLES = [];
const LONG_FUNCTIONS = [];

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'k8s/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Only src/config/ reads process.env.' },
      ],
    },
  },
  {
    // Type-aware promise and throw rules.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/only-throw-error': 'error',
    },
  },
  {
    files: ['src/**/*.ts', 'workers/**/*.ts'],
    ignores: [...TABLES, ...LONG_FUNCTIONS],
    rules: { 'max-lines-per-function': MAX_FUNCTION_LINES },
  },
  {
    files: ['src/**/*.ts', 'workers/**/*.ts'],
    ignores: ['src/exec/run/start.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: SUBPROCESS.map((name) => ({
            name,
            message: 'Only src/exec/run/start.ts starts processes: use run() from src/exec/run.js.',
          })),
        },
      ],
    },
  },
  {
    // dependency-cruiser reads its configuration as CommonJS.
    files: ['.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    // The CLI launcher (a CommonJS script run by node, before the CLI it loads): it sets the CLI's
    // argv and environment from the message it is sent, never the service's.
    files: ['workers/builder/devcontainer-launcher.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', process: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-restricted-properties': 'off' },
  },
  {
    // The Dockerfile keyer of builds offered secrets (a CommonJS script the docker wrapper runs).
    files: ['workers/builder/keyed-dockerfile.cjs'],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', process: 'readonly', module: 'writable' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // ibs (src/client) is a program of its own: its one reader of the environment is its env.ts.
    files: ['src/client/env.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['src/config/**', 'src/service.ts', 'test/**', 'bench/**', '*.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
