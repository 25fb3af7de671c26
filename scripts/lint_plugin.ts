/**
 * Project lint rules, after denoland/std's `_tools/lint_plugin.ts`.
 *
 * - `rousseau/top-level-function`: top-level functions are `function` declarations; arrows
 *   are for closures.
 *
 * @module
 */

const MESSAGE = "Use a `function` declaration at top level; keep arrow functions for closures";

const plugin: Deno.lint.Plugin = {
  name: "rousseau",
  rules: {
    "top-level-function": {
      create(context) {
        const report = (node: Deno.lint.VariableDeclarator) => {
          context.report({ node, message: MESSAGE });
        };
        return {
          "Program > VariableDeclaration > VariableDeclarator[init.type='ArrowFunctionExpression']":
            report,
          "Program > ExportNamedDeclaration > VariableDeclaration > VariableDeclarator[init.type='ArrowFunctionExpression']":
            report,
        };
      },
    },
  },
};

export default plugin;
