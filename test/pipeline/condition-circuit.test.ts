import { describe, expect, it } from 'vitest';
import { conditionHolds } from '../../src/pipeline/condition.js';
import { Circuit } from '../../src/pipeline/circuit.js';
import { fnv1a, parseShard, shardOf } from '../../src/input/shard.js';

const results = {
  loc: { decision: 'Approve', 'bureau_intel.bureau_score': 720, empty: null },
  skipped: { skipped: true },
};

describe('stage conditions', () => {
  it.each([
    [{ stage: 'loc', field: 'decision', equals: 'approve' }, true],
    [{ stage: 'loc', field: 'decision', equals: 'Reject' }, false],
    [{ stage: 'loc', field: 'decision', not_equals: 'Reject' }, true],
    [{ stage: 'loc', field: 'decision', in: ['Approved', 'Approve'] }, true],
    [{ stage: 'loc', field: 'decision', not_in: ['Approve'] }, false],
    [{ stage: 'loc', field: 'bureau_intel.bureau_score', gte: 700 }, true],
    [{ stage: 'loc', field: 'bureau_intel.bureau_score', lte: 700 }, false],
    [{ stage: 'loc', field: 'empty', exists: true }, false],
    [{ stage: 'loc', field: 'missing', exists: false }, true],
    [{ stage: 'skipped', field: 'decision', equals: 'Approve' }, false],
    [{ stage: 'skipped', field: 'decision', exists: false }, true],
    // names of Object.prototype members are ordinary, absent fields and stages
    [{ stage: 'loc', field: 'constructor', exists: false }, true],
    [{ stage: 'loc', field: 'toString', exists: true }, false],
    [{ stage: 'constructor', field: 'decision', exists: false }, true],
  ])('%j -> %s', (c, expected) => {
    expect(conditionHolds(c, results)).toBe(expected);
  });
});

describe('circuit breaker', () => {
  it('opens after N consecutive service failures, resets on success, ignores data errors', () => {
    const c = new Circuit({ consecutive: 3, share: 1, window: 10 });
    expect(c.record('TIMEOUT')).toBeUndefined();
    expect(c.record('SERVER_UNAVAILABLE')).toBeUndefined();
    expect(c.record(null)).toBeUndefined();
    expect(c.record('WORKFLOW_REJECTED_INPUT')).toBeUndefined();
    expect(c.record('NETWORK')).toBeUndefined();
    expect(c.record('NETWORK')).toBeUndefined();
    expect(c.record('NETWORK')).toMatch(/3 consecutive calls failed/);
  });
  it('opens on the failure share over a full window', () => {
    const c = new Circuit({ consecutive: 0, share: 0.5, window: 4 });
    expect(c.record('TIMEOUT')).toBeUndefined();
    expect(c.record(null)).toBeUndefined();
    expect(c.record('TIMEOUT')).toBeUndefined();
    expect(c.record('TIMEOUT')).toMatch(/3 of the last 4/);
  });
  it('counts throttling apart: 429s neither open it nor break a run of failures', () => {
    const c = new Circuit({ consecutive: 3, share: 0.5, window: 4 });
    for (let i = 0; i < 50; i += 1) expect(c.record('RATE_LIMITED')).toBeUndefined();
    expect(c.throttled).toBe(50);
    expect(c.record('NETWORK')).toBeUndefined();
    expect(c.record('RATE_LIMITED')).toBeUndefined();
    expect(c.record('NETWORK')).toBeUndefined();
    expect(c.record('NETWORK')).toMatch(/3 consecutive calls failed/);
  });
});

describe('shards', () => {
  it('FNV-1a is stable', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
  });
  it('every key lands in exactly one shard, spread evenly', () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4000; i += 1) counts[shardOf(`ref-${i}`, i + 1, 4) - 1] += 1;
    for (const n of counts) expect(n).toBeGreaterThan(850);
  });
  it.each(['0/2', '3/2', 'a/b', '1'])('rejects --shard %s', (s) =>
    expect(() => parseShard(s)).toThrow(/Expected --shard K\/N/),
  );
});
