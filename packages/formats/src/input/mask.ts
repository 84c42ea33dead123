/**
 * Masking of personal data and secrets for errors.ndjson and logs (CONTRACT "Output folder": the row is
 * written "personal data masked"; "Secrets never appear in any output or log").
 *
 * The column (or nested key) name decides how a value is masked; the shape is kept so a person can still
 * see what kind of value was there (`ABCDE1234F` -> `******234F`, `FAKE TESTPERSON` -> `F. T.`). Values of
 * unclassified columns still go through `maskText`, which catches PAN-, Aadhaar-, phone- and e-mail-like
 * text wherever it is.
 */
import { valueKind } from './value-kind.js';

export type MaskCategory =
  | 'secret'
  | 'raw'
  | 'pan'
  | 'aadhaar'
  | 'phone'
  | 'email'
  | 'name'
  | 'address'
  | 'dob'
  | 'account'
  | 'pincode'
  | 'geo';

/** `pan_number`, `panNumber`, `PAN-NUMBER` and `external.pan_number` all normalise to `pannumber`. */
function normaliseKey(name: string): string {
  const last = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1) : name;
  return last.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const EXACT: Readonly<Record<string, MaskCategory>> = {
  // secrets: the BSA auth_token column (spec 4.4), report links and file passwords (account spec 2.4, 2.6)
  authtoken: 'secret',
  xauthtoken: 'secret',
  token: 'secret',
  accesstoken: 'secret',
  password: 'secret',
  filepassword: 'secret',
  secret: 'secret',
  clientsecret: 'secret',
  apikey: 'secret',
  url: 'secret',
  reporturl: 'secret',
  generatedname: 'secret',
  // raw reports and bank data: large and full of personal data
  bureaurawjson: 'raw',
  rawdata: 'raw',
  rawreport: 'raw',
  bureaureport: 'raw',
  bankdata: 'raw',
  transactiondata: 'raw',
  serviceresponse: 'raw',
  fetcheddata: 'raw',
  pan: 'pan',
  pannumber: 'pan',
  panno: 'pan',
  pancard: 'pan',
  panid: 'pan',
  aadhaar: 'aadhaar',
  aadhar: 'aadhaar',
  aadhaarnumber: 'aadhaar',
  aadharnumber: 'aadhaar',
  aadhaarno: 'aadhaar',
  aadharno: 'aadhaar',
  uid: 'aadhaar',
  dob: 'dob',
  dateofbirth: 'dob',
  birthdate: 'dob',
  accountholderdob: 'dob',
  accountnumber: 'account',
  accountno: 'account',
  accno: 'account',
  maskedaccnumber: 'account',
  bankaccountnumber: 'account',
  acctnumber: 'account',
  accountrefno: 'account',
  linkrefno: 'account',
  pincode: 'pincode',
  pincodeaadhar: 'pincode',
  pin: 'pincode',
  zipcode: 'pincode',
  postalcode: 'pincode',
  latitude: 'geo',
  longitude: 'geo',
  lat: 'geo',
  lng: 'geo',
  lon: 'geo',
  nominee: 'name',
  accountholdernominee: 'name',
};

/** Keys ending in "name" that name things, not people. */
const NOT_PERSON_NAMES = new Set([
  'bankname',
  'filename',
  'workflowname',
  'enginename',
  'ruleenginename',
  'servicename',
  'productname',
  'branchname',
  'templatename',
  'fipname',
  'scorename',
  'scorecardname',
  'membershortname',
  'institutionname',
  'statename',
  'cityname',
  'attrname',
  'stagename',
  'columnname',
  'fieldname',
  'formatname',
  'bureauname',
]);

/** How a column's value is masked, or undefined when it is not personal data. */
export function maskCategory(name: string): MaskCategory | undefined {
  const key = normaliseKey(name);
  const exact = EXACT[key];
  if (exact) return exact;
  if (key.includes('password') || key.includes('secret') || key.endsWith('token')) return 'secret';
  if (key.includes('email') || key === 'mail') return 'email';
  if (key.includes('address')) return 'address';
  if (key.includes('phone') || key.includes('mobile') || key.includes('landline')) return 'phone';
  if (key.includes('aadhar') || key.includes('aadhaar')) {
    // the *_aadhar columns of 4.3 are details "per national id": the name and pincode are personal,
    // state and city are not; anything else named after the id is the id number
    if (key.includes('name')) return 'name';
    if (key.includes('pincode')) return 'pincode';
    if (key.includes('state') || key.includes('city')) return undefined;
    return 'aadhaar';
  }
  if (key.endsWith('name') && !NOT_PERSON_NAMES.has(key)) return 'name';
  return undefined;
}

/** True when error messages must not quote the value of this column (personal data or a secret). */
export function isPersonalField(name: string): boolean {
  return maskCategory(name) !== undefined;
}

function keepLast(s: string, n: number, char = '*'): string {
  if (s.length <= n) return char.repeat(s.length);
  return char.repeat(s.length - n) + s.slice(s.length - n);
}

function byteLength(value: unknown): number {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  return Buffer.byteLength(text, 'utf8');
}

function initials(s: string): string {
  return s
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => `${w[0].toUpperCase()}.`)
    .join(' ');
}

function maskEmail(s: string): string {
  const at = s.lastIndexOf('@');
  if (at <= 0) return keepLast(s, 0);
  return `${s[0]}***${s.slice(at)}`;
}

/** Masks one scalar (string or number) of a known category. */
function maskScalar(category: MaskCategory, value: string | number | boolean): string | number | boolean {
  if (typeof value === 'boolean') return category === 'secret' ? '[secret]' : value;
  // An empty cell stays empty: it hides nothing, and shown as a value (a latitude of 0) it would mislead.
  if (typeof value === 'string' && value.trim() === '') return value;
  if (category === 'geo') {
    const n = typeof value === 'number' ? value : Number(value);
    // about 1 km: enough to see a wrong hemisphere or swapped coordinates, not enough to find a home; what is
    // not a number is shown by its kind, as the row's message says it ("text of 3 characters")
    return Number.isFinite(n) ? Math.round(n * 100) / 100 : `[${valueKind(value)}]`;
  }
  const s = String(value);
  switch (category) {
    case 'secret':
      return '[secret]';
    case 'raw':
      return `[redacted ${byteLength(s)} bytes]`;
    case 'pan':
      return keepLast(s, 4);
    case 'aadhaar':
      return keepLast(s.replace(/[\s-]/g, ''), 4);
    case 'account':
      return keepLast(s, 4);
    case 'phone': {
      const digits = s.replace(/\D/g, '');
      return digits.length === 0 ? keepLast(s, 0) : keepLast(digits, 3);
    }
    case 'email':
      return maskEmail(s);
    case 'name':
      return initials(s);
    case 'address':
      return `[redacted address, ${s.length} chars]`;
    case 'dob':
      return s.replace(/[0-9]/g, '*');
    case 'pincode':
      return s.length > 3 ? s.slice(0, 3) + '*'.repeat(s.length - 3) : s;
  }
}

/** Categories whose whole value goes, even when it is an object or array. */
const WHOLE: ReadonlySet<MaskCategory> = new Set(['secret', 'raw', 'address']);

function maskValue(value: unknown, category: MaskCategory | undefined, key: string): unknown {
  if (value === null || value === undefined) return value;
  if (category && WHOLE.has(category)) {
    if (category === 'secret') return '[secret]';
    if (category === 'raw') return `[redacted ${byteLength(value)} bytes]`;
    return typeof value === 'string' ? maskScalar(category, value) : `[redacted address, ${byteLength(value)} bytes]`;
  }
  if (Array.isArray(value)) return value.map((v) => maskValue(v, category, key));
  if (typeof value === 'object') return maskObject(value as Record<string, unknown>, category);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    if (category) return maskScalar(category, value);
    // identifiers are non-personal by the spec (2.1) and needed to find the row again
    if (typeof value === 'string' && !/(^|_)id$|Id$/.test(key)) return maskText(value);
  }
  return value;
}

function maskObject(obj: Record<string, unknown>, inherited: MaskCategory | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    Object.defineProperty(out, k, {
      value: maskValue(v, maskCategory(k) ?? inherited, k),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}

/**
 * The row with personal data masked and secrets removed, same keys and nesting. Nested keys are judged
 * by their own names (`{"external":{"bureau_raw_json":...}}`, dotted columns by their last name).
 */
export function maskRow(data: Record<string, unknown>): Record<string, unknown> {
  return maskObject(data, undefined);
}

// Patterns for free text. Look-arounds instead of \b so `PAN:ABCDE1234F,` and `+919876543210` match.
const PAN_RE = /(?<![A-Za-z0-9])[A-Za-z]{5}[0-9]{4}[A-Za-z](?![A-Za-z0-9])/g;
const AADHAAR_RE = /(?<![0-9])[0-9]{4}[ -]?[0-9]{4}[ -]?[0-9]{4}(?![0-9])/g;
const PHONE_RE = /(?<![0-9+])(?:\+?91[ -]?|0)?[0-9]{10}(?![0-9])/g;
const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g;

/**
 * A row error's message with the value it quotes (`got 'abc'`) masked as the row's `input` shows that field
 * (`got '[redacted]'`): the message must not give away what the masked row hides.
 */
export function maskQuotedValue(
  message: string,
  field: string | undefined,
  data: Readonly<Record<string, unknown>>,
): string {
  if (field === undefined || !Object.hasOwn(data, field)) return message;
  const raw = data[field];
  if (typeof raw !== 'string' && typeof raw !== 'number') return message;
  const masked = maskRow({ [field]: raw })[field];
  if (masked === raw || String(raw) === '') return message;
  return message.split(`'${String(raw)}'`).join(`'${String(masked)}'`);
}

/** Masks PAN-, Aadhaar-, 10-digit phone- and e-mail-like substrings of free text (messages, excerpts). */
export function maskText(text: string): string {
  return text
    .replace(EMAIL_RE, (m) => maskEmail(m))
    .replace(PAN_RE, (m) => keepLast(m, 4))
    .replace(PHONE_RE, (m) => keepLast(m, 3))
    .replace(AADHAAR_RE, (m) => keepLast(m.replace(/[ -]/g, ''), 4));
}
