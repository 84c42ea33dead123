/**
 * Bureau report format detection from the report text (spec 2.7, "Top-level shapes of the reports").
 * Pure: the caller reads the file. Reasons name keys and roots only, never values (reports are personal data).
 *
 * JSON reports are told apart by their root key:
 *   cir_report_file -> bureau_b_json        CIR-REPORT-FILE  -> bureau_b_hardpull
 *   INDV-REPORT-FILE -> bureau_b_json_v2    INProfileResponse -> bureau_c_softpull_json
 *   CCRResponse -> bureau_d_softpull_json   consumerCreditData -> bureau_a_json
 * XML: a root element CIR-REPORT-FILE (any case, `-` or `_`, any namespace prefix) is bureau_b_xml, the
 * XML form of bureau_b's cir_report_file structure. The spec does not show a bureau_b_xml sample; the root
 * is chosen to match the structure the other two bureau_b forms share.
 * Never detected: bureau_c_softpull_json_v2 (its shape is not shown) — the user must name it.
 * Refused: the SOAP envelope form of the bureau_c report (processResponse > processReturn >
 * INProfileResponse), and a bare INProfileResponse XML: "bureau_c_xml" is not an accepted format name.
 */
import type { BureauFormat } from './formats.js';

export type DetectResult =
  | { readonly format: BureauFormat }
  | { readonly unknown: string; readonly code: 'REPORT_FORMAT_UNKNOWN' | 'REPORT_FORMAT_UNSUPPORTED' };

export interface ReportInspection {
  /** What the text parses as; `invalid` when neither (the service would answer 500). */
  readonly syntax: 'json' | 'xml' | 'invalid';
  /** Why the text is `invalid`, without quoting it; a predicate of "the report" ("is empty"). */
  readonly syntaxError?: string;
  readonly result: DetectResult;
}

const JSON_ROOTS: ReadonlyArray<readonly [string, BureauFormat, 'object' | 'array']> = [
  ['consumerCreditData', 'bureau_a_json', 'array'],
  ['cir_report_file', 'bureau_b_json', 'object'],
  ['CIR-REPORT-FILE', 'bureau_b_hardpull', 'object'],
  ['INDV-REPORT-FILE', 'bureau_b_json_v2', 'object'],
  ['INProfileResponse', 'bureau_c_softpull_json', 'object'],
  ['CCRResponse', 'bureau_d_softpull_json', 'object'],
];

const NEVER_DETECTED = 'bureau_c_softpull_json_v2 is never detected: its shape is not documented';
const SOAP_REASON =
  'the SOAP/XML form of the bureau_c report (bureau_c_xml) is not accepted by the API; send the ' +
  'bureau_c_softpull_json form (INProfileResponse as JSON)';

function unknown(reason: string): DetectResult {
  return { unknown: reason, code: 'REPORT_FORMAT_UNKNOWN' };
}

function listKeys(keys: readonly string[]): string {
  const shown = keys.slice(0, 8).map((k) => (k.length > 40 ? `${k.slice(0, 37)}...` : k));
  return `[${shown.join(', ')}${keys.length > 8 ? `, ... ${keys.length - 8} more` : ''}]`;
}

function detectJson(value: unknown): DetectResult {
  if (Array.isArray(value)) return unknown('the report is a JSON array; every bureau report is a JSON object');
  if (typeof value !== 'object' || value === null)
    return unknown(`the report is a JSON ${value === null ? 'null' : typeof value}, not an object`);
  const obj = value as Record<string, unknown>;
  const hits = JSON_ROOTS.filter(([key]) => Object.hasOwn(obj, key));
  if (hits.length > 1)
    return unknown(
      `the report has the root keys of several formats (${hits.map(([, f]) => f).join(', ')}): name it in bureau_type`,
    );
  if (hits.length === 1) {
    const [key, format, kind] = hits[0];
    const v = obj[key];
    const ok = kind === 'array' ? Array.isArray(v) : typeof v === 'object' && v !== null && !Array.isArray(v);
    if (!ok) return unknown(`'${key}' (the root of ${format}) should be an ${kind}`);
    return { format };
  }
  const keys = Object.keys(obj);
  if (keys.length === 0) return unknown('the report is an empty JSON object');
  return unknown(`JSON with top-level keys ${listKeys(keys)} matches no known bureau format (${NEVER_DETECTED})`);
}

/** Name of the root element, after the XML declaration, comments, processing instructions and DOCTYPE. */
export function xmlRoot(text: string): string | undefined {
  let i = 0;
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (text.startsWith('<?', i)) {
      const e = text.indexOf('?>', i);
      if (e < 0) return undefined;
      i = e + 2;
      continue;
    }
    if (text.startsWith('<!--', i)) {
      const e = text.indexOf('-->', i);
      if (e < 0) return undefined;
      i = e + 3;
      continue;
    }
    if (text.startsWith('<!', i)) {
      const e = text.indexOf('>', i);
      if (e < 0) return undefined;
      i = e + 1;
      continue;
    }
    break;
  }
  const m = /^<([A-Za-z_][\w.:-]*)/.exec(text.slice(i, i + 200));
  return m ? m[1] : undefined;
}

/** A light well-formedness check (no XML parser is installed): the root element closes the text. */
function xmlClosed(trimmed: string, root: string): boolean {
  const name = root.replace(/\./g, '\\.');
  if (new RegExp(`</${name}\\s*>$`).test(trimmed)) return true;
  return new RegExp(`^<${name}(?:\\s[^<>]*)?/>$`).test(trimmed.slice(trimmed.indexOf(`<${root}`)));
}

function detectXml(text: string, root: string): DetectResult {
  const local = root.includes(':') ? root.slice(root.indexOf(':') + 1) : root;
  const canon = local.toUpperCase().replace(/_/g, '-');
  if (canon === 'ENVELOPE') {
    if (/processResponse|processReturn|INProfileResponse/.test(text))
      return { unknown: SOAP_REASON, code: 'REPORT_FORMAT_UNSUPPORTED' };
    return unknown('a SOAP envelope with no bureau report inside (no processResponse/processReturn/INProfileResponse)');
  }
  if (canon === 'INPROFILERESPONSE') return { unknown: SOAP_REASON, code: 'REPORT_FORMAT_UNSUPPORTED' };
  if (canon === 'CIR-REPORT-FILE') return { format: 'bureau_b_xml' };
  return unknown(
    `XML with root element <${root}> matches no known bureau format (bureau_b_xml has root <CIR-REPORT-FILE>)`,
  );
}

function invalid(why: string, hint = ''): ReportInspection {
  return { syntax: 'invalid', syntaxError: why, result: unknown(`the report ${why}${hint}`) };
}

/** Parses the text once and says both whether it is well-formed and which format it is. */
export function inspectReport(text: string): ReportInspection {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const trimmed = body.trim();
  if (trimmed === '') return invalid('is empty');
  if (trimmed[0] === '<') {
    const root = xmlRoot(trimmed);
    if (!root) return invalid('starts with < but has no XML root element');
    if (!xmlClosed(trimmed, root))
      return invalid(`has an XML root element <${root}> that is not closed at the end (truncated file?)`);
    return { syntax: 'xml', result: detectXml(trimmed, root) };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch (err) {
    // JSON.parse messages quote the text around the error; keep only the position
    const pos = /position (\d+)/.exec(String((err as Error).message));
    const hint = /^[A-Za-z0-9+/=\s]{16,}$/.test(trimmed) ? '; it looks like base64: decode it first' : '';
    return invalid(`is neither JSON${pos ? ` (syntax error at character ${pos[1]})` : ''} nor XML`, hint);
  }
  return { syntax: 'json', result: detectJson(parsed) };
}

/** The format of a bureau report, or why it cannot be told (spec 2.7). */
export function detectBureauFormat(text: string): DetectResult {
  return inspectReport(text).result;
}
