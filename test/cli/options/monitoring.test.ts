/** `run`'s monitoring options (src/cli/run-options/monitoring.ts): --progress, --metrics-file, --metrics-port, --log-format. */
import { describe, expect, it } from 'vitest';
import { refusal, resolveArgs } from './parse.js';

describe('--progress', () => {
  it('is on by default, off with --no-progress', () => {
    expect(resolveArgs([]).settings.progress).toBe(true);
    expect(resolveArgs(['--no-progress']).settings.progress).toBe(false);
  });
});

describe('--metrics-file and --metrics-port', () => {
  it('start no metrics by default', () => {
    expect(resolveArgs([]).metrics).toBeUndefined();
  });

  it('ask for the file, the port, or both', () => {
    expect(resolveArgs(['--metrics-file', '/var/lib/node_exporter/bre.prom']).metrics).toEqual({
      file: '/var/lib/node_exporter/bre.prom',
    });
    expect(resolveArgs(['--metrics-port', '9464']).metrics).toEqual({ port: 9464 });
  });

  it.each(['70000', 'http', '-1'])('refuse port %s, quoted as given', (given) => {
    expect(refusal([`--metrics-port=${given}`])).toEqual({
      code: 'USAGE',
      message: `Expected --metrics-port to be a port number from 0 to 65535, got '${given}'`,
    });
  });

  it('--pushgateway asks for a push, its URL checked where the metrics start', () => {
    expect(resolveArgs(['--pushgateway', 'http://127.0.0.1:9091']).metrics).toEqual({
      pushgateway: 'http://127.0.0.1:9091',
    });
  });

  it('are not started for --plan, which runs nothing', () => {
    expect(resolveArgs(['--plan', '--metrics-port', '9464']).metrics).toBeUndefined();
  });
});

describe('--log-format', () => {
  it('is human by default, or json', () => {
    expect(resolveArgs([]).logFormat).toBe('human');
    expect(resolveArgs(['--log-format', 'json']).logFormat).toBe('json');
  });

  it('takes no other', () => {
    expect(() => resolveArgs(['--log-format', 'xml'])).toThrow(/Invalid values:[\s\S]*xml/);
  });
});
