import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detectFile, runDetect } from '../../src/cli/detect.js';
import { detectBureauFormat, inspectReport, xmlRoot } from '../../src/services/bureau/detect.js';

const REPORTS = join(dirname(fileURLToPath(import.meta.url)), '../../samples/reports');

/** What every shipped sample report must detect as; a new sample file must be added here. */
const EXPECTED: Record<string, string> = {
  'bureau_a.json': 'bureau_a_json',
  'bureau_b.json': 'bureau_b_json',
  'bureau_b_v2.json': 'bureau_b_json_v2',
  'bureau_b_hardpull.json': 'bureau_b_hardpull',
  'bureau_b.xml': 'bureau_b_xml',
  'bureau_c_softpull.json': 'bureau_c_softpull_json',
  'bureau_d_softpull.json': 'bureau_d_softpull_json',
  'bureau_c_soap.xml': 'unsupported',
};

describe('samples/reports', () => {
  const files = readdirSync(REPORTS).sort();
  it('has one sample per shown format, and nothing untested', () => {
    expect(files).toEqual(Object.keys(EXPECTED).sort());
  });
  it.each(files)('%s is detected as expected', (file) => {
    const text = readFileSync(join(REPORTS, file), 'utf8');
    const r = detectBureauFormat(text);
    if (EXPECTED[file] === 'unsupported') {
      expect(r).toMatchObject({ code: 'REPORT_FORMAT_UNSUPPORTED' });
      expect('unknown' in r && r.unknown).toMatch(/SOAP.*not accepted/);
    } else {
      expect(r).toEqual({ format: EXPECTED[file] });
    }
  });
  it.each(files)('%s is clearly fake', (file) => {
    const text = readFileSync(join(REPORTS, file), 'utf8');
    expect(text).toMatch(/FAKE/);
  });
});

describe('detectBureauFormat', () => {
  const j = (o: unknown): string => JSON.stringify(o);
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['bureau_a root', j({ controlData: { success: true }, consumerCreditData: [] }), { format: 'bureau_a_json' }],
    ['bureau_b root', j({ cir_report_file: {} }), { format: 'bureau_b_json' }],
    ['hardpull root', j({ 'CIR-REPORT-FILE': {} }), { format: 'bureau_b_hardpull' }],
    ['v2 root', j({ 'INDV-REPORT-FILE': { 'INDV-REPORTS': {} } }), { format: 'bureau_b_json_v2' }],
    ['bureau_c root', j({ INProfileResponse: {} }), { format: 'bureau_c_softpull_json' }],
    ['bureau_d root', j({ InquiryResponseHeader: {}, CCRResponse: {} }), { format: 'bureau_d_softpull_json' }],
    ['BOM and whitespace', `\ufeff  ${j({ cir_report_file: {} })}\n`, { format: 'bureau_b_json' }],
    [
      'xml root any case and separator',
      '<?xml version="1.0"?><cir_report_file><a/></cir_report_file>',
      { format: 'bureau_b_xml' },
    ],
    [
      'xml root with a namespace prefix',
      '<!-- c --><ns:CIR-REPORT-FILE xmlns:ns="u"></ns:CIR-REPORT-FILE>',
      { format: 'bureau_b_xml' },
    ],
    [
      'soap envelope',
      '<soapenv:Envelope><soapenv:Body><processResponse><processReturn><INProfileResponse/></processReturn></processResponse></soapenv:Body></soapenv:Envelope>',
      { code: 'REPORT_FORMAT_UNSUPPORTED' },
    ],
    [
      'bare INProfileResponse xml',
      '<INProfileResponse><SCORE/></INProfileResponse>',
      { code: 'REPORT_FORMAT_UNSUPPORTED' },
    ],
    ['empty soap envelope', '<Envelope><Body/></Envelope>', { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['other xml root', '<Report></Report>', { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['truncated xml', '<CIR-REPORT-FILE><A>', { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['unknown json keys', j({ foo: 1, bar: 2 }), { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['two roots', j({ cir_report_file: {}, CCRResponse: {} }), { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['root of the wrong type', j({ consumerCreditData: {} }), { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['json array', j([{ cir_report_file: {} }]), { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['empty', '  ', { code: 'REPORT_FORMAT_UNKNOWN' }],
    ['not json', '{"a": ', { code: 'REPORT_FORMAT_UNKNOWN' }],
  ];
  it.each(cases)('%s', (_name, text, expected) => {
    expect(detectBureauFormat(text)).toMatchObject(expected);
  });

  it('reasons name keys, not values, and point at bureau_c_softpull_json_v2', () => {
    const r = detectBureauFormat(j({ name: 'FAKE TESTPERSON', pan: 'ABCDE1234F' }));
    expect('unknown' in r && r.unknown).toMatch(
      /top-level keys \[name, pan\].*bureau_c_softpull_json_v2 is never detected/,
    );
    expect('unknown' in r && r.unknown).not.toMatch(/TESTPERSON|ABCDE1234F/);
    const bad = detectBureauFormat('{"pan":"ABCDE1234F",');
    expect('unknown' in bad && bad.unknown).not.toMatch(/ABCDE1234F/);
  });

  it('hints at base64 given instead of the report', () => {
    const r = detectBureauFormat(Buffer.from(j({ cir_report_file: {} })).toString('base64'));
    expect('unknown' in r && r.unknown).toMatch(/looks like base64/);
  });

  it('inspectReport says what the text parses as', () => {
    expect(inspectReport('{}').syntax).toBe('json');
    expect(inspectReport('<a></a>').syntax).toBe('xml');
    expect(inspectReport('<a/>').syntax).toBe('xml');
    expect(inspectReport('nope').syntax).toBe('invalid');
    expect(xmlRoot('<?xml version="1.0"?>\n<!DOCTYPE x>\n<!-- hi -->\n<Root attr="1">')).toBe('Root');
  });
});

describe('detect command', () => {
  it('one line per file, exit 0 when all are detected', async () => {
    const lines: string[] = [];
    const code = await runDetect([join(REPORTS, 'bureau_a.json'), join(REPORTS, 'bureau_b.xml')], (l) => lines.push(l));
    expect(code).toBe(0);
    expect(lines).toEqual([
      `${join(REPORTS, 'bureau_a.json')}\tbureau_a_json\n`,
      `${join(REPORTS, 'bureau_b.xml')}\tbureau_b_xml\n`,
    ]);
  });
  it('exit 1 when one is unknown; the SOAP form is unknown with its reason', async () => {
    const lines: string[] = [];
    const code = await runDetect([join(REPORTS, 'bureau_a.json'), join(REPORTS, 'bureau_c_soap.xml')], (l) =>
      lines.push(l),
    );
    expect(code).toBe(1);
    expect(lines[1]).toMatch(/bureau_c_soap\.xml\tunknown: the SOAP\/XML form of the bureau_c report/);
  });
  it('exit 2 for a missing file, still with its line', async () => {
    const lines: string[] = [];
    const code = await runDetect(['no/such/file.json', join(REPORTS, 'bureau_c_soap.xml')], (l) => lines.push(l));
    expect(code).toBe(2);
    expect(lines[0]).toBe('no/such/file.json\tunknown: cannot read file: no such file\n');
    expect(lines).toHaveLength(2);
  });
  it('detectFile reports a folder', async () => {
    expect(await detectFile(REPORTS)).toMatchObject({ status: 2, text: 'unknown: cannot read file: it is a folder' });
  });
});
