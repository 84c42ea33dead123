/** Bureau report format names (spec 2.7). Neutral names: bureau_a..bureau_d are four different bureaus. */

/** bureau_format_name: values of `external.bureau_type` accepted by the BRE workflows. */
export const BRE_BUREAU_FORMATS = [
  'bureau_a_json',
  'bureau_b_json',
  'bureau_b_json_v2',
  'bureau_b_xml',
  'bureau_b_hardpull',
  'bureau_c_softpull_json',
  'bureau_d_softpull_json',
  'bureau_c_softpull_json_v2',
] as const;

export type BureauFormat = (typeof BRE_BUREAU_FORMATS)[number];

/** format_type: values accepted by the bureau feature endpoint. bureau_c_softpull_json_v2 is not among them. */
export const FEATURE_FORMAT_TYPES: readonly BureauFormat[] = BRE_BUREAU_FORMATS.filter(
  (f) => f !== 'bureau_c_softpull_json_v2',
);

/** Formats whose report text is XML rather than JSON. */
export const XML_FORMATS: ReadonlySet<BureauFormat> = new Set<BureauFormat>(['bureau_b_xml']);
