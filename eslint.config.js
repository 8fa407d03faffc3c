// ESLint: a deliberately small rule set (docs/architecture.md "Layering, checked"). Import
// direction is dependency-cruiser's job (.dependency-cruiser.cjs), so no import rules here.
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

const STORE_SQL_RULES = [
  {
    selector: "CallExpression[callee.property.name='statement']",
    message: "Raw SQL stays in core/src/store: add a named query to a table module in core/src/store/tables/ instead.",
  },
  {
    selector: "MemberExpression[property.name='db']",
    message:
      "The SQLite connection stays in core/src/store: use the store's methods (isOpen, dataVersion, the table modules).",
  },
];

const SYNC_READS =
  "/^(get|select|count|exists|lastSequence|eventsAfter|getReceipt|previousUpsert|firstUpsertSequence|dueEffects|outboxAgenda|unfinishedEffects|getEffect|nextEffectDueAt)$/";
const SYNC_READ_MESSAGE =
  "The store's reads become promises with its port (issue 33): read through `engine.reader` (await it) outside a command, or the command's ctx inside one.";
const STORE_SYNC_READ_RULES = [
  // engine.store.get(…), this.store.select(…)
  {
    selector: `CallExpression[callee.object.property.name='store'][callee.property.name=${SYNC_READS}]`,
    message: SYNC_READ_MESSAGE,
  },
  // const store = engine.store; store.get(…)
  {
    selector: `CallExpression[callee.object.name='store'][callee.property.name=${SYNC_READS}]`,
    message: SYNC_READ_MESSAGE,
  },
];

export default defineConfig(
  {
    ignores: ["**/dist/**", "**/node_modules/**", "plugins/codex/src/codex-wire/**", "ci/node22/**"],
  },
  {
    files: ["**/*.ts", "web/src/**/*.tsx"],
    linterOptions: { reportUnusedDisableDirectives: "error" },
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: {
        // Type information for no-floating-promises: the package tsconfigs for the sources,
        // tsconfig.tests.json for the tests.
        project: [
          "./tsconfig.tests.json",
          "./{spec,core,sdk,testkit,registry-cache}/tsconfig.json",
          "./plugins/*/tsconfig.json",
          "./templates/*/tsconfig.json",
          "./web/tsconfig.json",
          "./web/tsconfig.node.json",
        ],
        tsconfigRootDir: import.meta.dirname,
        // tsyringe reads constructor parameter types from decorator metadata, so an import
        // used there must stay a value import: consistent-type-imports knows it from these.
        experimentalDecorators: true,
        emitDecoratorMetadata: true,
      },
    },
    plugins: { "@typescript-eslint": tseslint.plugin },
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        {
          args: "after-used",
          argsIgnorePattern: "^_",
          varsIgnorePattern: "^_",
          caughtErrors: "none",
          ignoreRestSiblings: true,
        },
      ],
      "@typescript-eslint/consistent-type-imports": [
        "error",
        { prefer: "type-imports", fixStyle: "inline-type-imports" },
      ],
      "@typescript-eslint/no-floating-promises": "error",
      // Issue 33 made most reads promises: a promise used as a value (a condition, a filter's
      // predicate, an event handler's return) is always truthy and its failure unhandled.
      "@typescript-eslint/no-misused-promises": ["error", { checksVoidReturn: { attributes: false } }],
      "@typescript-eslint/await-thenable": "error",
    },
  },
  {
    // Issue 33: SQL is the store's own business. The layers above ask the table modules
    // (core/src/store/tables/) their named questions, which a second backend implements.
    // And the store's reads answer with promises on PostgreSQL: outside a command, code reads
    // through `Engine.reader` (a CommittedReader), inside one through its CommandContext.
    files: ["core/src/**/*.ts"],
    ignores: ["core/src/store/**"],
    rules: { "no-restricted-syntax": ["error", ...STORE_SQL_RULES, ...STORE_SYNC_READ_RULES] },
  },
  {
    // The engine's transaction and the readers over the store are where synchronous reads live.
    files: ["core/src/engine/command-context.ts", "core/src/engine/projection-reader.ts", "core/src/engine/engine.ts"],
    rules: { "no-restricted-syntax": ["error", ...STORE_SQL_RULES] },
  },
);
