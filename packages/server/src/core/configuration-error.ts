/** A start that cannot go on for a reason the operator can fix: printed as one line, exit code 1 (exit.ts). */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}
