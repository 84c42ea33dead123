/**
 * How session ids map to generated accounts, shared by the account endpoints and bank_bre's fetched modes.
 * Magic substrings in aa_session_id steer the sandbox (documented in packages/sandbox/README.md):
 *   unknown* (prefix)  no such session
 *   multi              AA multi-consent session (consent_handle required)
 *   twoacc             BSA session with two accounts
 *   stuck / failed     BSA session that never becomes ready / ends in failure
 *   nofiles            BSA session without valid uploaded files
 */
import { accountFor, type Account } from './transactions.js';
import { istMonthIndex, monthStart } from './time.js';

export const isUnknownSession = (id: string) => /^unknown/i.test(id);
export const isMultiConsent = (id: string) => /multi/i.test(id);
const hasTwoAccounts = (id: string) => /twoacc/i.test(id);
export const isStuck = (id: string) => /stuck/i.test(id);
export const isFailing = (id: string) => /failed/i.test(id);
export const hasNoFiles = (id: string) => /nofiles/i.test(id);

/** The AA account behind a session (and consent, for multi-consent sessions). */
export function aaAccount(userId: string, sessionId: string, consentHandle?: string): Account {
  return accountFor(consentHandle ? `${userId}|${sessionId}|${consentHandle.toLowerCase()}` : `${userId}|${sessionId}`);
}

/** The BSA accounts (one per uploaded statement) behind a session. */
export function bsaAccounts(userId: string, sessionId: string): Account[] {
  const first = accountFor(`${userId}|${sessionId}`);
  return hasTwoAccounts(sessionId) ? [first, accountFor(`${userId}|${sessionId}|2`)] : [first];
}

/** A BSA statement covers the 6 full calendar months (IST) before the month its processing started. */
export function bsaPeriod(endMs: number): { from: number; to: number } {
  const m = istMonthIndex(endMs);
  return { from: monthStart(m - 6), to: monthStart(m) - 1 };
}
