import { describe, expect, it } from 'vitest';
import { tlsFailure } from '../../src/http/tls-failure.js';

const err = (code: string) => Object.assign(new Error(`boom ${code}`), { code });

describe('TLS failures in words', () => {
  it.each([
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'not signed by a known CA: give --ca-file'],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'not signed by a known CA'],
    ['CERT_HAS_EXPIRED', 'has expired'],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'for another host name'],
    ['ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'client certificate'],
    ['ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'client certificate'],
  ])('%s: TLS_FAILED naming the service, the origin and what to do', (code, words) => {
    const e = tlsFailure('bureau', 'https://gw.example:8443', err(code))!;
    expect(e.code).toBe('TLS_FAILED');
    expect(e.service).toBe('bureau');
    expect(e.message).toContain('https://gw.example:8443');
    expect(e.message).toContain(words);
    expect(e.message).toContain(code);
  });

  it('the code may sit on the cause (undici wraps socket errors); a non-TLS code is not a TLS failure', () => {
    expect(tlsFailure('workflow', 'https://x', { cause: { code: 'CERT_HAS_EXPIRED' } })?.code).toBe('TLS_FAILED');
    expect(tlsFailure('workflow', 'https://x', err('ECONNRESET'))).toBeUndefined();
    expect(tlsFailure('workflow', 'https://x', new Error('no code'))).toBeUndefined();
  });
});
