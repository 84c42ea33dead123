/** The command a stop message prints (src/cli/resume-command.ts) and the launchers the run watches (src/pipeline/stop.ts). */
import { describe, expect, it } from 'vitest';
import { resumeCommand, shellQuote } from '../../src/cli/resume-command.js';
import { detachedOnPurpose, isShellCommandLauncher } from '../../src/pipeline/stop.js';

describe('the command that resumes', () => {
  const argv = [
    'run',
    'location',
    '--input',
    'samples/my file.csv',
    '--query',
    "SELECT * FROM t WHERE a = 'x'",
    '--rate',
    'workflow=400/min',
  ];

  it('quotes for a POSIX shell only what needs it', () => {
    expect(shellQuote('samples/location.csv')).toBe('samples/location.csv');
    expect(shellQuote('workflow=400/min')).toBe('workflow=400/min');
    expect(shellQuote('my file.csv')).toBe("'my file.csv'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote('$(date +%F)')).toBe("'$(date +%F)'");
    expect(shellQuote('')).toBe("''");
  });

  it('names the launcher the person used: npx, npm start, else the bin', () => {
    expect(resumeCommand(argv, {})).toBe(
      "bre-batch run location --input 'samples/my file.csv' --query 'SELECT * FROM t WHERE a = '\\''x'\\''' --rate workflow=400/min",
    );
    expect(
      resumeCommand(['run', 'location'], {
        npm_command: 'exec',
        npm_lifecycle_event: 'npx',
        npm_lifecycle_script: "'bre-batch'",
      }),
    ).toBe('npx bre-batch run location');
    expect(
      resumeCommand(['run', 'rescore'], {
        npm_command: 'start',
        npm_lifecycle_event: 'start',
        npm_lifecycle_script: 'npm run -s build && exec node bin/bre-batch.js run rescore',
      }),
    ).toBe('npm start');
    // A test runner started by npx passes its npm variables down: not bre-batch's launcher.
    expect(
      resumeCommand(['run', 'location'], {
        npm_command: 'exec',
        npm_lifecycle_event: 'npx',
        npm_lifecycle_script: 'vitest',
      }),
    ).toBe('bre-batch run location');
  });
});

describe('the launchers whose going stops the run', () => {
  it('a shell running a command string: sh -c, dash -c, bash -ec, /bin/sh -c; not an interactive shell, not npm, not node', () => {
    expect(isShellCommandLauncher(['sh', '-c', "'bre-batch' run x"])).toBe(true);
    expect(isShellCommandLauncher(['/bin/dash', '-c', 'cd /x && bre-batch run x'])).toBe(true);
    expect(isShellCommandLauncher(['/usr/bin/bash', '-ec', 'bre-batch run x'])).toBe(true);
    expect(isShellCommandLauncher(['-bash'])).toBe(false);
    expect(isShellCommandLauncher(['bash'])).toBe(false);
    expect(isShellCommandLauncher(['npm exec bre-batch run x'])).toBe(false);
    expect(isShellCommandLauncher(['node', '-c', 'x'])).toBe(false);
  });

  it('a run detached on purpose is not stopped: nohup (SIGHUP ignored), setsid (a session of its own), a trailing &', () => {
    const stat = (session: number) => `${process.pid} (node) S 100 200 ${session} 0 -1`;
    const plain = 'SigIgn:\t0000000001001000\n';
    expect(detachedOnPurpose(plain, stat(1), ['sh', '-c', 'bre-batch run x'])).toBe(false);
    expect(detachedOnPurpose('SigIgn:\t0000000001001001\n', stat(1), ['sh', '-c', 'bre-batch run x'])).toBe(true);
    expect(detachedOnPurpose(plain, stat(process.pid), ['sh', '-c', 'bre-batch run x'])).toBe(true);
    expect(detachedOnPurpose(plain, stat(1), ['sh', '-c', 'bre-batch run x &'])).toBe(true);
    expect(detachedOnPurpose(plain, stat(1), ['sh', '-c', 'bre-batch run x && echo done'])).toBe(false);
  });
});
