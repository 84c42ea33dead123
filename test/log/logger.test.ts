import { describe, expect, it } from 'vitest';
import { createLog, parseLogFormat } from '../../src/log/logger.js';
import { Redactor } from '../../src/output/redact.js';

describe('--log-format', () => {
  it('json: one object a line with time, level, message and the fields; secrets scrubbed everywhere', () => {
    const lines: string[] = [];
    const r = new Redactor();
    r.add('tok-SECRET-123456');
    const log = createLog({ format: 'json', scrub: (t) => r.scrub(t), write: (t) => lines.push(t) });
    log('warning (row 3, line 4): bad value tok-SECRET-123456', {
      level: 'warn',
      row: 3,
      line: 4,
      stage: 'bre',
      code: 'INVALID_ROW',
    });
    log('stopped', {
      level: 'error',
      service: 'workflow',
      status: 401,
      code: 'AUTH_REFUSED',
      detail: 'token tok-SECRET-123456',
    });
    log('plain');
    const parsed = lines
      .join('')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(parsed).toHaveLength(3);
    expect(parsed[0]).toMatchObject({ level: 'warn', row: 3, line: 4, stage: 'bre', code: 'INVALID_ROW' });
    expect(new Date(parsed[0].time).toISOString()).toBe(parsed[0].time);
    expect(parsed[1]).toMatchObject({ level: 'error', service: 'workflow', status: 401, code: 'AUTH_REFUSED' });
    expect(parsed[2]).toMatchObject({ level: 'info', message: 'plain' });
    expect(lines.join('')).not.toContain('tok-SECRET-123456');
    expect(parsed[0].message).toContain('bad value');
  });

  it('human (the default): the message alone, scrubbed', () => {
    const lines: string[] = [];
    const log = createLog({
      format: parseLogFormat(undefined),
      scrub: (t) => t.replace('secret', '***'),
      write: (t) => lines.push(t),
    });
    log('a secret here', { row: 1 });
    expect(lines).toEqual(['a *** here\n']);
    expect(() => parseLogFormat('xml')).toThrow("Expected --log-format to be one of human, json, got 'xml'");
  });
});
