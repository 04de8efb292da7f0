import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript'

// The layering of src/, kept by lint (see docs/architecture.md): each folder is one layer,
// and imports flow one way:
//   kernel/ → steps/ → combinators/ (never each other) → index.ts, extend.ts → adapter/ → mcp/, the framework adapters
//   → gateway/ (over mcp/ only) → cli/
// and nothing in src/ imports the root (index.ts): it is for users, so it can shrink freely
const COMBINATORS = [
  'combinators/Provider.ts',
  'combinators/UnknownKeys.ts',
  'combinators/Reasons.ts',
  'combinators/Registry.ts',
  'combinators/Policy.ts',
  'combinators/Pins.ts',
]
const ADAPTERS = [
  'mcp',
  'ai-sdk',
  'openai',
  'openai-agents',
  'langchain',
  'anthropic',
  'google',
  'claude-agent',
  'otel',
]
const ABOVE_COMBINATORS = ['index.ts', 'extend.ts', 'adapter', ...ADAPTERS, 'gateway', 'cli']
const at = (paths) => paths.map((p) => `./src/${p}`)

const zones = [
  {
    target: './src/kernel',
    from: at(['steps', 'combinators', ...ABOVE_COMBINATORS]),
    message: 'kernel/ imports only kernel/',
  },
  {
    target: './src/steps',
    from: at(['combinators', ...ABOVE_COMBINATORS]),
    message: 'steps/ imports only kernel/ and steps/',
  },
  // a combinator never imports another combinator, nor anything above it
  ...COMBINATORS.map((c) => ({
    target: at([c]),
    from: at([...COMBINATORS.filter((o) => o !== c), ...ABOVE_COMBINATORS]),
    message: 'a combinator never imports another combinator, nor the layers above it',
  })),
  {
    target: at(['index.ts', 'extend.ts']),
    from: at(['adapter', ...ADAPTERS, 'gateway', 'cli']),
    message: 'index and extend re-export the library only',
  },
  {
    target: './src',
    from: './src/index.ts',
    message: 'nothing in src/ imports the root: import from the defining module, or from extend.ts',
  },
  // what the framework adapters share (list once, call one): above the combinators, below the adapters
  {
    target: './src/adapter',
    from: at([...ADAPTERS, 'gateway', 'cli']),
    message: 'adapter/ (the adapters’ shared steps) imports the library, not an adapter or the command',
  },
  // adapters stand beside one another, below the command
  ...ADAPTERS.map((a) => ({
    target: at([a]),
    from: at([...ADAPTERS.filter((o) => o !== a), 'gateway', 'cli']),
    message: 'an adapter imports the library, not another adapter, the gateway or the command',
  })),
  // the gateway stands on the MCP adapters, below the command
  {
    target: at(['gateway']),
    from: at([...ADAPTERS.filter((o) => o !== 'mcp'), 'cli']),
    message: 'gateway/ imports the library and mcp/, not another adapter or the command',
  },
  // the command uses the public API and the audit's shared steps
  {
    target: at(['cli']),
    from: './src',
    except: [
      './extend.ts',
      './steps/audit',
      './cli',
      './mcp/index.ts',
      // the proxy's watchdog, which loads no SDK: the proxy runs without the optional peers
      './mcp/watchdog.ts',
      './gateway/index.ts',
      './otel/index.ts',
      './kernel/describe.ts',
      './kernel/guards.ts',
    ],
    message:
      'cli/ imports extend, mcp/index, mcp/watchdog, gateway/index, otel/index, the audit steps and the kernel’s describe and guards only',
  },
]

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'reports/**',
      'scratch/**',
      '.stryker-tmp*/**',
      // the MCP conformance suite's reference server, vendored unchanged (vendor/conformance-server/VENDORED.md)
      'vendor/**',
    ],
  },
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
      // prettier keeps code within 120 columns but never breaks a string or a comment: this bounds those
      'max-len': ['error', { code: 160, tabWidth: 2 }],
    },
  },
  {
    files: ['**/*.mjs', '**/*.js'],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
      },
    },
  },
)
