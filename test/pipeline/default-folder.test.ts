/**
 * The folder of a run without --out (src/pipeline/default-folder.ts): the latest folder of the same run is
 * taken up while unfinished and its input unchanged; a finished one, or one whose input changed, gives a new
 * folder and a line saying why; another pipeline, input, shard or limit is not the same run; stdin and dry
 * runs never take one up.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPipeline } from '../../src/config/pipeline.js';
import { writeManifest, type Manifest, type RunSummary } from '@bre-batch/formats';
import { writeSummary } from '@bre-batch/formats/summary';
import { inputFingerprint } from '../../src/output/folder-identity.js';
import { chooseDefaultFolder, type FolderQuery } from '../../src/pipeline/default-folder.js';
import { tempDir } from '../helpers/temp.js';

const pipeline = loadPipeline('location');
const NOW = new Date('2026-11-26T09:00:00Z');

async function folder(
  root: string,
  name: string,
  input: string,
  opts: { finished?: boolean; shard?: string; limit?: number; pipelineSha?: string } = {},
): Promise<string> {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  const m: Manifest = {
    version: 1,
    tool: 'bre-batch',
    pipeline: { name: pipeline.name, path: pipeline.path, sha256: opts.pipelineSha ?? pipeline.sha256 },
    input: {
      path: resolve(input),
      format: 'csv',
      ...(await inputFingerprint(input)),
      reading: { encoding: 'utf-8', delimiter: ',', decimal_comma: false },
    },
    key: pipeline.key,
    shard: opts.shard ?? null,
    limit: opts.limit ?? null,
    created_at: NOW.toISOString(),
  } as Manifest;
  writeManifest(dir, m);
  if (opts.finished !== undefined)
    writeSummary(dir, { finished: opts.finished, dry_run: false } as unknown as RunSummary);
  return dir;
}

describe('the default output folder', () => {
  const setup = () => {
    const root = tempDir();
    const input = join(root, 'in.csv');
    writeFileSync(input, 'reference_id,user_id,lead_id,latitude,longitude\nA,u,l,1,2\n');
    const q: FolderQuery = { pipeline, input };
    return { root: join(root, 'output'), input, q };
  };

  it('no earlier folder: a new timestamped one, no note', async () => {
    const { root, q } = setup();
    expect(await chooseDefaultFolder(q, root, NOW)).toEqual({
      dir: join(root, 'location-20261126T090000Z'),
      resumed: false,
    });
  });

  it('the latest unfinished folder of the same run (stopped, or killed before any summary) is taken up, saying so', async () => {
    const { root, input, q } = setup();
    await folder(root, 'location-20261125T010000Z', input, { finished: false });
    const killed = await folder(root, 'location-20261125T020000Z', input);
    const c = await chooseDefaultFolder(q, root, NOW);
    expect(c).toMatchObject({ dir: killed, resumed: true });
    expect(c.note).toMatch(/^resuming the unfinished run in .*location-20261125T020000Z \(same pipeline and input/);
  });

  it('a finished latest folder: a new folder, and a line saying the finished one is not reused', async () => {
    const { root, input, q } = setup();
    await folder(root, 'location-20261125T010000Z', input, { finished: false });
    const done = await folder(root, 'location-20261125T020000Z', input, { finished: true });
    const c = await chooseDefaultFolder(q, root, NOW);
    expect(c.resumed).toBe(false);
    expect(c.dir).toBe(join(root, 'location-20261126T090000Z'));
    expect(c.note).toBe(
      `${done} has finished this run already: starting a new one in ${c.dir} (--out ${done} looks at the finished one again)`,
    );
  });

  it('--plan after a finished run: says what the run would do, naming no folder it would not make', async () => {
    const { root, input, q } = setup();
    const done = await folder(root, 'location-20261125T020000Z', input, { finished: true });
    const c = await chooseDefaultFolder({ ...q, plan: true }, root, NOW);
    expect(c.note).toBe(
      `${done} has finished this run already: the run would start a new folder beside it (--plan makes none; --out ${done} looks at the finished one again)`,
    );
    expect(c.note).not.toContain('20261126T090000Z');
    expect(existsSync(c.dir)).toBe(false);
  });

  it('an unfinished folder whose input file changed since: a new folder, saying so', async () => {
    const { root, input, q } = setup();
    const old = await folder(root, 'location-20261125T010000Z', input, { finished: false });
    writeFileSync(input, 'reference_id,user_id,lead_id,latitude,longitude\nB,u,l,1,2\n');
    const c = await chooseDefaultFolder(q, root, NOW);
    expect(c.resumed).toBe(false);
    expect(c.note).toContain(`${old} is unfinished, but ${input} has changed since it started`);
  });

  it('another pipeline contents, shard or --limit is another run: not taken up, nothing said', async () => {
    const { root, input, q } = setup();
    await folder(root, 'location-20261125T010000Z', input, { finished: false, pipelineSha: 'other' });
    await folder(root, 'location-20261125T020000Z', input, { finished: false, shard: '1/2' });
    await folder(root, 'location-20261125T030000Z', input, { finished: false, limit: 5 });
    mkdirSync(join(root, 'bank-20261125T040000Z'), { recursive: true });
    expect(await chooseDefaultFolder(q, root, NOW)).toEqual({
      dir: join(root, 'location-20261126T090000Z'),
      resumed: false,
    });
    expect((await chooseDefaultFolder({ ...q, shard: { index: 1, count: 2 } }, root, NOW)).dir).toBe(
      join(root, 'location-20261125T020000Z'),
    );
    expect((await chooseDefaultFolder({ ...q, limit: 5 }, root, NOW)).dir).toBe(
      join(root, 'location-20261125T030000Z'),
    );
  });

  it('stdin and dry runs never take a folder up', async () => {
    const { root, input, q } = setup();
    await folder(root, 'location-20261125T010000Z', input, { finished: false });
    expect((await chooseDefaultFolder({ ...q, input: '-' }, root, NOW)).resumed).toBe(false);
    expect((await chooseDefaultFolder({ ...q, fresh: true }, root, NOW)).resumed).toBe(false);
  });
});
