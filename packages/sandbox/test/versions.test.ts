/**
 * The sandbox's version switch (packages/sandbox/src/versions.ts): the grammar, and an endpoint changing version at a
 * call or a time.
 */
import { describe, expect, it } from 'vitest';
import { parseSandboxFlags } from '../src/options.js';
import { parseVersionSwitches, validateVersionSwitches } from '../src/versions.js';
import { call, post, withSandbox } from './helpers.js';
import type { Sandbox } from '../src/index.js';

describe('--switch-version', () => {
  it.each([
    ['location_bre=v2@call:100', { endpoint: 'location_bre', to: 'v2', atCall: 100 }],
    ['location_bre_challenger=v1@call:1', { endpoint: 'location_bre_challenger', to: 'v1', atCall: 1 }],
    ['bank_bre=v2@after:30s', { endpoint: 'bank_bre', to: 'v2', afterMs: 30_000 }],
    ['bank_bre=v2@after:250', { endpoint: 'bank_bre', to: 'v2', afterMs: 250 }],
  ])('reads %s', (spec, want) => {
    expect(parseVersionSwitches([spec])).toEqual([want]);
    expect(parseSandboxFlags({ 'switch-version': [spec] }).versionSwitches).toEqual([want]);
  });

  it.each([
    'location_bre=v3@call:1',
    'location_bre=v2',
    'location_bre=v2@call:0',
    'location_bre=v2@call:x',
    'v2@call:1',
    'a/b=v2@call:1',
  ])('refuses %s with Expected ..., got', (spec) => {
    expect(() => parseVersionSwitches([spec])).toThrow(`Expected --switch-version ENDPOINT=VERSION@call:N`);
    expect(() => parseVersionSwitches([spec])).toThrow(`got '${spec}'`);
  });

  it.each([
    [{ endpoint: 'location_bre', to: 'v2' }],
    [{ endpoint: 'location_bre', to: 'v2', atCall: 1, afterMs: 5 }],
    [{ endpoint: 'location_bre', to: 'v9', atCall: 1 }],
    [{ endpoint: 'x y', to: 'v2', atCall: 1 }],
    ['location_bre'],
  ])('refuses the object %j', (o) => {
    expect(() => validateVersionSwitches([o])).toThrow(/^Expected versionSwitches as/);
  });
});

const location = (sb: Sandbox, endpoint = 'location_bre') =>
  post(sb, `/execute/${sb.clientId}/${endpoint}`, {
    user_id: 'u1',
    reference_id: 'r1',
    input_data: { lead_id: 'l1', latitude: 19.076, longitude: 72.8777 },
  });

const versionOf = async (sb: Sandbox, endpoint?: string) => {
  const r = await location(sb, endpoint);
  return [r.json.workflow_version_path, r.json.output_data.rules_output.final_decision.version];
};

describe('a version switch', () => {
  it('at a call: the calls before it answer v1, from it on v2; other endpoints are left alone', async () => {
    await withSandbox({ versionSwitches: [{ endpoint: 'location_bre', to: 'v2', atCall: 3 }] }, async (sb) => {
      const seen = [];
      for (let i = 0; i < 4; i += 1) seen.push(await versionOf(sb));
      expect(seen).toEqual([
        ['workflow_location_v1', 'v1'],
        ['workflow_location_v1', 'v1'],
        ['workflow_location_v2', 'v2'],
        ['workflow_location_v2', 'v2'],
      ]);
      expect(await versionOf(sb, 'location_bre_challenger')).toEqual(['workflow_location_v2', 'v2']);
    });
  });

  it('at a time on the sandbox clock, and replaced through the control path (calls counted again)', async () => {
    await withSandbox({ versionSwitches: [{ endpoint: 'location_bre', to: 'v2', afterMs: 60_000 }] }, async (sb) => {
      expect(await versionOf(sb)).toEqual(['workflow_location_v1', 'v1']);
      sb.clock.advance(60_000);
      expect(await versionOf(sb)).toEqual(['workflow_location_v2', 'v2']);
      const set = await post(sb, '/__sandbox/versions', [{ endpoint: 'location_bre', to: 'v2', atCall: 2 }]);
      expect(set.json).toEqual([{ endpoint: 'location_bre', to: 'v2', atCall: 2 }]);
      expect(await versionOf(sb)).toEqual(['workflow_location_v1', 'v1']);
      expect(await versionOf(sb)).toEqual(['workflow_location_v2', 'v2']);
      expect((await call(sb, 'GET', '/__sandbox/versions')).json).toEqual(set.json);
      const bad = await post(sb, '/__sandbox/versions', [{ endpoint: 'location_bre', to: 'v7', atCall: 2 }]);
      expect(bad.status).toBe(400);
      expect(bad.json.detail).toMatch(/^Expected versionSwitches as/);
    });
  });
});
