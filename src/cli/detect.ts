/**
 * `bre-batch detect <file...>` (CONTRACT): one line per file, `<path as given>\t<format | unknown: reason>`.
 * Exit 0 when every file was detected, 1 when some were not, 2 when a file could not be read (its line
 * still says why). A bureau_c SOAP report is "unknown" too: the API does not accept that form.
 */
import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { detectBureauFormat } from '../services/bureau/detect.js';

export interface DetectLine {
  readonly path: string;
  readonly text: string;
  /** 0 detected, 1 unknown, 2 unreadable. */
  readonly status: 0 | 1 | 2;
}

export async function detectFile(
  path: string,
  read: (p: string) => Promise<Buffer> = (p) => readFile(p),
): Promise<DetectLine> {
  let bytes: Buffer;
  try {
    bytes = await read(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a folder'
          : code === 'EACCES'
            ? 'permission denied'
            : (code ?? String(err));
    return { path, text: `unknown: cannot read file: ${why}`, status: 2 };
  }
  const result = detectBureauFormat(bytes.toString('utf8'));
  return 'format' in result
    ? { path, text: result.format, status: 0 }
    : { path, text: `unknown: ${result.unknown}`, status: 1 };
}

/** Detects every file in order, writes one line each, and returns the exit code. */
export async function runDetect(paths: readonly string[], write: (line: string) => void): Promise<number> {
  let code = 0;
  for (const path of paths) {
    const line = await detectFile(path);
    write(`${line.path}\t${line.text}\n`);
    code = Math.max(code, line.status);
  }
  return code;
}

/** What a script calling `detect` decides by (also in docs/reference/commands.md). */
const DETECT_EXIT_CODES =
  "Exit codes: 0 every file's format was told; 1 some file's format is unknown (its line says why); 2 some file could not be read (its line says why: no such file, a folder, permission denied). The highest applies.";

export const detectCommand: CommandModule<object, { file: string[] }> = {
  command: 'detect <file...>',
  describe: 'print the bureau report format of each file (bureau_a_json, ...) or why it cannot be told',
  builder: (y) =>
    y
      .positional('file', { type: 'string', array: true, demandOption: true, describe: 'bureau report files' })
      .epilogue(DETECT_EXIT_CODES) as never,
  handler: async (argv) => {
    process.exitCode = await runDetect(argv.file.map(String), (line) => process.stdout.write(line));
  },
};
