import { describe, expect, it } from 'vitest';
import { listPipelineNames, loadPipeline, parsePipeline } from '../../src/config/pipeline.js';

describe('pipeline files', () => {
  it('every shipped pipeline loads', () => {
    const names = listPipelineNames();
    expect(names).toEqual(
      expect.arrayContaining([
        'location',
        'bureau_mobile',
        'bank',
        'bureau_mobile_bank',
        'repeat',
        'bureau_features',
        'rescore',
        'aa_transactions',
        'bsa_transactions',
        'champion_challenger',
      ]),
    );
    for (const n of names) expect(loadPipeline(n).stages.length).toBeGreaterThan(0);
  });

  it.each([
    [
      'unknown kind',
      'stages:\n  - id: a\n    kind: nope\n',
      /p\.yaml: stages\[0\]\.kind: Expected one of .*got 'nope'/,
    ],
    ['no stages', 'name: x\n', /p\.yaml: stages: Expected array, got nothing/],
    [
      'unknown key',
      'stages:\n  - id: a\n    kind: workflow\n    endpoint: e\n    colour: red\n',
      /stages\[0\]: Expected no key 'colour'/,
    ],
    [
      'duplicate id',
      'stages:\n  - { id: a, kind: bureau_features }\n  - { id: a, kind: bureau_features }\n',
      /Expected a unique stage id/,
    ],
    [
      'condition on a later stage',
      'stages:\n  - { id: a, kind: bureau_features, when: { stage: b, field: x, equals: 1 } }\n  - { id: b, kind: bureau_features }\n',
      /when\[0\]\.stage: Expected the id of an earlier stage/,
    ],
    ['bad YAML', 'stages: [\n', /not valid YAML/],
  ])('%s is refused with file, place and expectation', (_n, text, msg) => {
    expect(() => parsePipeline(text, '/x/p.yaml')).toThrow(msg);
  });

  it('an unknown pipeline name lists the shipped ones', () => {
    expect(() => loadPipeline('nope')).toThrow(/no pipeline named 'nope': Expected one of .*location/);
  });
});
