/**
 * The environment a tool's child processes get: this process's, minus its secrets.
 *
 * @module
 */

/** Variables always removed: the provider keys this process holds. */
export const SECRET_VARIABLES: readonly string[] = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY"];

const ROUSSEAU_SECRET = /^ROUSSEAU_.*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIALS?)/i;

/** `env` without provider keys, `ROUSSEAU_*` secrets and the names in `remove`. */
export function scrubEnvironment(
  env: Readonly<Record<string, string>>,
  remove: readonly string[] = [],
): Record<string, string> {
  const drop = new Set([...SECRET_VARIABLES, ...remove]);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (!drop.has(name) && !ROUSSEAU_SECRET.test(name)) out[name] = value;
  }
  return out;
}
