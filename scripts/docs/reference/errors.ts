/**
 * docs/reference/errors.md: every error code with how the program treats it, read from the table the retry
 * chain, the row runner, the circuit breaker and the exit code all read (ERROR_TABLE, packages/core/src/errors.ts).
 */
import { ERROR_CODES, treatmentOf } from '@bre-batch/core/errors';
import { table } from './markdown.js';

const LANDS: Readonly<Record<string, string>> = {
  row: 'Costs a row: one line in `errors.ndjson`, and the run goes on',
  stop: 'Stops the command',
  'row or stop': 'Costs a row or stops the command, as [what it means](../troubleshooting.md#by-error-code) says',
  wait: 'Costs nothing but time: the row waits and is sent again',
};

/** One sentence of what the program does with a code, from its row of ERROR_TABLE. */
function treatment(code: (typeof ERROR_CODES)[number]): string {
  const t = treatmentOf(code);
  const exit = t.lands === 'stop' || t.lands === 'row or stop' ? ` (exit ${t.exit})` : '';
  const retried =
    t.retry === 'yes'
      ? 'The call is tried again (up to `--max-attempts` but for a 429)'
      : t.retry === '2xx'
        ? 'The call is tried again when the answer was a 2xx'
        : 'Not tried again';
  const circuit = t.serviceFailure
    ? 'counts as the service failing for the circuit breaker'
    : 'does not count for the circuit breaker';
  return `${LANDS[t.lands]}${exit}. ${retried}; it ${circuit}.`;
}

export function errorsPage(): string[] {
  return [
    '# Error codes',
    '',
    'Every error code, as the program treats it (one table, `ERROR_TABLE` in `packages/core/src/errors.ts`, read by the retries,',
    'the rows, the circuit breaker and the exit code): whether it costs a row (one line in `errors.ndjson`; a run',
    'that finishes with such lines exits 1) or stops the command, and with which exit code (2: nothing was done,',
    'fix the command or the configuration; 3: stopped early, re-run the same command to resume), whether the call',
    'is tried again, and whether it counts for the circuit breaker (`--max-consecutive-failures`,',
    '`--max-failure-share`). What each means and what to do: [Troubleshooting](../troubleshooting.md#by-error-code).',
    '',
    ...table(
      ['code', 'costs', 'exit'],
      ERROR_CODES.map((code) => {
        const t = treatmentOf(code);
        return [
          `[\`${code}\`](#${code.toLowerCase()})`,
          t.lands,
          t.lands === 'row' || t.lands === 'wait' ? '' : String(t.exit),
        ];
      }),
    ),
    ...ERROR_CODES.flatMap((code) => ['', `## ${code}`, '', treatment(code)]),
  ];
}
