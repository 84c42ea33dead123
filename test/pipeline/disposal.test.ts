/**
 * The run's disposal stack (src/pipeline/disposal.ts): reverse order, once, every step run whatever fails,
 * the first failure thrown and the others told, steps run early skipped by close.
 */
import { describe, expect, it } from 'vitest';
import { Disposer } from '../../src/pipeline/disposal.js';

describe('Disposer', () => {
  it('closes the parts in reverse order of their acquisition, each told how the run ended', async () => {
    const d = new Disposer<string>();
    const seen: string[] = [];
    for (const name of ['input', 'folder', 'egress', 'monitor'])
      d.defer(name, (end) => void seen.push(`${name}:${end}`));
    await d.close('stopped');
    expect(seen).toEqual(['monitor:stopped', 'egress:stopped', 'folder:stopped', 'input:stopped']);
  });

  it('waits for each step before the next (an async teardown is finished before the part before it goes)', async () => {
    const d = new Disposer();
    const seen: string[] = [];
    d.defer('lock', () => void seen.push('lock'));
    d.defer('journals', async () => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      seen.push('journals');
    });
    await d.close();
    expect(seen).toEqual(['journals', 'lock']);
  });

  it('closes once: a second close returns the first one and runs nothing again', async () => {
    const d = new Disposer();
    let runs = 0;
    d.defer('a', () => {
      runs += 1;
    });
    const first = d.close();
    expect(d.close()).toBe(first);
    await first;
    await d.close();
    expect(runs).toBe(1);
    expect(d.closed).toBe(true);
  });

  it('runs every step when some throw: the first failure is thrown, the later ones are told with their step', async () => {
    const told: [string, string][] = [];
    const d = new Disposer((err, step) => told.push([step, (err as Error).message]));
    const seen: string[] = [];
    d.defer('input', () => void seen.push('input'));
    d.defer('folder', () => {
      seen.push('folder');
      throw new Error('the lock file is gone');
    });
    d.defer('egress', async () => {
      seen.push('egress');
      throw new Error('a limiter failed to stop');
    });
    d.defer('progress', () => void seen.push('progress'));
    await expect(d.close()).rejects.toThrow('a limiter failed to stop');
    expect(seen).toEqual(['progress', 'egress', 'folder', 'input']);
    expect(told).toEqual([['folder', 'the lock file is gone']]);
    // Still once, failure included.
    await expect(d.close()).rejects.toThrow('a limiter failed to stop');
    expect(seen).toHaveLength(4);
  });

  it('closing on a failure of the caller’s own: every step’s failure is told, none thrown', async () => {
    const told: [string, string][] = [];
    const d = new Disposer((err, step) => told.push([step, (err as Error).message]));
    d.defer('folder', () => {
      throw new Error('the lock file is gone');
    });
    d.defer('egress', () => {
      throw new Error('a limiter failed to stop');
    });
    await d.close(undefined, true);
    expect(told).toEqual([
      ['egress', 'a limiter failed to stop'],
      ['folder', 'the lock file is gone'],
    ]);
  });

  it('an opening that throws half-way: the parts acquired before it are given back, the later never were', async () => {
    const d = new Disposer();
    const seen: string[] = [];
    // As Run.open does: what it acquired goes back, then its failure is thrown.
    const open = async () => {
      try {
        d.defer('input', () => void seen.push('input'));
        d.defer('sink', () => void seen.push('sink'));
        throw new Error('the folder is locked by another run');
      } catch (err) {
        await d.close();
        throw err;
      }
    };
    await expect(open()).rejects.toThrow('locked by another run');
    expect(seen).toEqual(['sink', 'input']);
  });

  it('a step run early runs once; close skips it, and its failure stays its caller’s', async () => {
    const told: unknown[] = [];
    const d = new Disposer((err) => told.push(err));
    const seen: string[] = [];
    const ends: unknown[] = [];
    d.defer('folder', () => void seen.push('folder'));
    const letGo = d.defer('services', (end) => {
      ends.push(end);
      seen.push('services');
      throw new Error('a limiter failed to stop');
    });
    d.defer('monitor', () => void seen.push('monitor'));
    await expect(letGo()).rejects.toThrow('a limiter failed to stop');
    await expect(letGo()).rejects.toThrow('a limiter failed to stop');
    expect(seen).toEqual(['services']);
    // Run early, before the run's end is known: told nothing.
    expect(ends).toEqual([undefined]);
    await d.close();
    expect(seen).toEqual(['services', 'monitor', 'folder']);
    expect(told).toEqual([]);
  });

  it('refuses a part acquired once closing has begun (it would never be given back)', async () => {
    const d = new Disposer();
    await d.close();
    expect(() => d.defer('late', () => undefined)).toThrow(/late was acquired after the run began closing/);
  });
});
