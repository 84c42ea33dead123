/**
 * Personal data in account responses (spec 2.2 Profile.Holders, 2.3 account_holder_*, 2.7 customerInfo:
 * "name, address, phone, e-mail, tax id and account numbers ... are personal data"). Results never copy
 * these fields; account numbers are kept only masked, since they tell a row's accounts apart.
 */

const PERSONAL_KEYS = new Set([
  'name',
  'dob',
  'mobile',
  'email',
  'pan',
  'address',
  'landline',
  'nominee',
  'phone',
  'customerinfo',
  'holders',
  'holder',
  'profile',
  'ckycregistered',
]);

/** Keys dropped from flattened insights/summaries: holder data and the usual personal field names. */
export function isPersonalKey(key: string): boolean {
  const k = key.toLowerCase();
  return k.startsWith('account_holder_') || k.startsWith('customer_') || PERSONAL_KEYS.has(k);
}

/**
 * An account number as it may go into outputs. The service masks them already (`XXXXXXXX1234`); a value
 * with no mask character and more than 4 characters is masked here, all but the last 4 characters as `X`.
 */
export function maskAccountNumber(value: string): string {
  const v = value.trim();
  if (/[xX*#•]/.test(v) || v.length <= 4) return v;
  return 'X'.repeat(v.length - 4) + v.slice(-4);
}
