/**
 * The command that resumes a stopped run, as the person typed it, for the stop message: the launcher they
 * used (`npx bre-batch`, `npm start`, else `bre-batch`) and the arguments, each quoted for a POSIX shell.
 */

/** One word as a POSIX shell reads it back: bare when it holds only characters no shell treats specially. */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/**
 * `argv`: the arguments after the script (process.argv.slice(2)); `env`: the process's environment, where npm
 * says which of its commands started us and with what script (`npm_lifecycle_event`: `npx` for npx and npm
 * exec, `start` for npm start; `npm_lifecycle_script`: the command it ran). The script is checked too: the
 * variables reach every process below npm, a bre-batch started by a test runner under npx among them.
 */
export function resumeCommand(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string {
  const script = env.npm_lifecycle_script ?? '';
  // npm start runs the package's own start script: the same two words run it again.
  if (env.npm_lifecycle_event === 'start' && script.includes('bre-batch')) return 'npm start';
  const launcher = env.npm_lifecycle_event === 'npx' && /^'?bre-batch'?$/.test(script) ? 'npx bre-batch' : 'bre-batch';
  return [launcher, ...argv.map(shellQuote)].join(' ');
}
