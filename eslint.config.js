// Type-aware lint: the rules that matter for a library living inside someone
// else's process (no floating promises, no misused promises).
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'scratch/**', 'spanfuse-out/**', 'eslint.config.js'] },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite', 'before', 'after', 'beforeEach', 'afterEach'] },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // What runs inside the app: node:fs, node:http and node:util come through
    // core/builtins.ts's require(); an ES import of them reads every export,
    // whose lazy getters load undici and more (+1 to +14 MB RSS on Node 24).
    files: ['src/**/*.ts'],
    ignores: ['src/cli/**', 'src/core/builtins.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:fs', 'node:http', 'node:util', 'fs', 'http', 'util'].map((name) => ({
            name,
            message: 'Use core/builtins.js (require) in code that runs in the app: the ES facade of this built-in costs memory.',
            allowTypeImports: true,
          })),
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // Fixtures generate uniquely named functions (ground truth by stack) and
    // include a CommonJS app on purpose.
    files: ['test/fixtures/**'],
    rules: {
      '@typescript-eslint/no-implied-eval': 'off',
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
);
