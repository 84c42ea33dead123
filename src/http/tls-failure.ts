/**
 * A TLS failure in words. Node reports them by OpenSSL's codes (UNABLE_TO_VERIFY_LEAF_SIGNATURE,
 * ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED, ...), which only errors.ndjson used to show while every row was
 * tried again as a network blip. Each is configuration: one message that says what to fix.
 */
import { BreError } from '@bre-batch/core/errors';
import type { ServiceName } from '@bre-batch/core/types';

const UNKNOWN_CA =
  "the server's certificate is not signed by a known CA: give --ca-file with the CA that signed it (or NODE_EXTRA_CA_CERTS)";
const CLIENT_REFUSED =
  "the server refused this side's client certificate, or wants one: give --client-cert and --client-key (or --client-pfx) with a certificate its CA signed";

const WORDS: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: UNKNOWN_CA,
  UNABLE_TO_GET_ISSUER_CERT: UNKNOWN_CA,
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: UNKNOWN_CA,
  SELF_SIGNED_CERT_IN_CHAIN: UNKNOWN_CA,
  DEPTH_ZERO_SELF_SIGNED_CERT: UNKNOWN_CA,
  CERT_UNTRUSTED: UNKNOWN_CA,
  CERT_HAS_EXPIRED: "the server's certificate has expired: the service must renew it (check the machine's clock too)",
  CERT_NOT_YET_VALID: "the server's certificate is not valid yet: check this machine's clock",
  ERR_TLS_CERT_ALTNAME_INVALID: "the server's certificate is for another host name: check the base URL's host",
  ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED: CLIENT_REFUSED,
  ERR_SSL_TLSV1_ALERT_UNKNOWN_CA: CLIENT_REFUSED,
  ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE: CLIENT_REFUSED,
  ERR_SSL_SSLV3_ALERT_CERTIFICATE_UNKNOWN: CLIENT_REFUSED,
  ERR_SSL_TLSV1_ALERT_ACCESS_DENIED: CLIENT_REFUSED,
  ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE:
    "the TLS handshake failed (no protocol or cipher in common, or a client certificate wanted): check the base URL's port and --client-cert",
  ERR_SSL_WRONG_VERSION_NUMBER: "the server did not answer TLS: is the base URL's port a plain-HTTP one (http://)?",
};

/** The code of a socket or TLS error, wherever undici put it. */
export function errorCodeOf(err: unknown): string | undefined {
  return (err as { code?: string }).code ?? (err as { cause?: { code?: string } }).cause?.code;
}

/** TLS_FAILED naming the service, the origin and the cause in words; undefined when `err` is not a TLS failure. */
export function tlsFailure(service: ServiceName, origin: string, err: unknown): BreError | undefined {
  const code = errorCodeOf(err);
  if (code === undefined) return undefined;
  const words = WORDS[code] ?? (/^(ERR_SSL_|ERR_TLS_|CERT_)/.test(code) ? `TLS failed (${code})` : undefined);
  if (words === undefined) return undefined;
  return new BreError('TLS_FAILED', `the ${service} service at ${origin}: ${words} (${code})`, { service, cause: err });
}
