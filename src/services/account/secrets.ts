/**
 * Secrets the account service returns (spec 2.4 report_url, 2.6 url / file_password / generated_name) go
 * only to StageOutput.secrets (the runner keeps them in a 0600 file). As a second line of defence, a result
 * value that contains a secret anywhere (a provider echoing the link in insights, say) is replaced.
 */
import type { Json, NormalisedResult } from '@bre-batch/core/types';
import type { SecretValue } from '@bre-batch/core/types';

export const REDACTED = '[redacted]';

function scrubValue(value: Json, needles: readonly string[]): Json {
  if (typeof value === 'string') return needles.some((n) => value.includes(n)) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, needles));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(value)) out[k] = scrubValue(v, needles);
    return out;
  }
  return value;
}

/** `result` with every string holding a secret value replaced by `[redacted]`. */
export function scrubSecrets(result: NormalisedResult, secrets: readonly SecretValue[]): NormalisedResult {
  // Very short values (a 3-character password) would redact ordinary words; they are not searched for.
  const needles = secrets.map((s) => s.value).filter((v) => v.length >= 6);
  if (needles.length === 0) return result;
  const out: NormalisedResult = {};
  for (const [k, v] of Object.entries(result)) out[k] = scrubValue(v, needles);
  return out;
}
