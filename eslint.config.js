import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['src/config/**', 'src/main.ts', 'src/observability/tracing.ts', 'test/**', 'bench/**', '*.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
