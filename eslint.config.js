import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

// The layering of src/, kept by lint (see DESIGN.md): imports flow one way,
//   leaves → pure steps → combinators (never each other) → index, extend → mcp/, adapters → cli/
// and nothing in src/ imports the root (index.ts): it is for users, so it can shrink freely
const LEAVES = ['model.ts', 'internal/describe.ts', 'internal/calls.ts', 'internal/guards.ts', 'internal/options.ts', 'internal/ref.ts', 'internal/StringMap.ts', 'Suggest.ts', 'policy/paths.ts']
const PURE = ['Args.ts', 'Batch.ts', 'audit', 'internal/answer.ts', 'policy/Rule.ts', 'policy/evaluate.ts', 'policy/Refusal.ts', 'policy/Answer.ts', 'policy/Verdict.ts', 'policy/ask.ts', 'policy/questions.ts', 'policy/listing.ts']
const COMBINATORS = ['Provider.ts', 'UnknownKeys.ts', 'Reasons.ts', 'Registry.ts', 'Policy.ts']
// what the framework adapters share (list once, call one): above the combinators, below the adapters
const ADAPTER_STEPS = ['internal/adapter.ts']
const ADAPTERS = ['mcp', 'ai-sdk', 'openai', 'openai-agents', 'langchain']
const ABOVE_COMBINATORS = ['index.ts', 'extend.ts', ...ADAPTER_STEPS, ...ADAPTERS, 'cli']
const at = (paths) => paths.map((p) => `./src/${p}`)

const zones = [
  // a leaf imports only leaves
  { target: at(LEAVES), from: at([...PURE, ...COMBINATORS, ...ABOVE_COMBINATORS]), message: 'a leaf imports only leaves' },
  // a pure step imports leaves and pure steps
  { target: at(PURE), from: at([...COMBINATORS, ...ABOVE_COMBINATORS]), message: 'a pure step imports only leaves and pure steps' },
  // a combinator never imports another combinator, nor anything above it
  ...COMBINATORS.map((c) => ({
    target: at([c]),
    from: at([...COMBINATORS.filter((o) => o !== c), ...ABOVE_COMBINATORS]),
    message: 'a combinator never imports another combinator, nor the layers above it',
  })),
  { target: at(['index.ts', 'extend.ts']), from: at([...ADAPTER_STEPS, ...ADAPTERS, 'cli']), message: 'index and extend re-export the library only' },
  { target: './src', from: './src/index.ts', message: 'nothing in src/ imports the root: import from the defining module, or from extend.ts' },
  { target: at(ADAPTER_STEPS), from: at([...ADAPTERS, 'cli']), message: 'the adapters’ shared steps import the library, not an adapter or the command' },
  // adapters stand beside one another, below the command
  ...ADAPTERS.map((a) => ({ target: at([a]), from: at([...ADAPTERS.filter((o) => o !== a), 'cli']), message: 'an adapter imports the library, not another adapter or the command' })),
  // the command uses the public API and the audit's shared steps
  {
    target: at(['cli']),
    from: './src',
    except: ['./extend.ts', './audit', './cli', './mcp/index.ts', './internal/describe.ts', './internal/guards.ts'],
    message: 'cli/ imports extend, mcp/index, the audit steps and the leaves describe and guards only',
  },
]

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'coverage/**', 'reports/**', '.stryker-tmp*/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })],
      // so that no-cycle reads the TypeScript modules it follows, not only the first
      'import-x/extensions': ['.ts', '.js'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', Buffer: 'readonly', URL: 'readonly' } },
  },
)
