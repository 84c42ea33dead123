import { describe, expect, it } from 'vitest';
import { RowWindow, windowSize } from '../../src/pipeline/window.js';
import { settle } from '../helpers/clock.js';
import { waitFor } from '../helpers/wait.js';

describe('RowWindow: the rows in flight follow the calls in flight', () => {
  it('a fixed size: the reader waits once it is full and goes on as rows end', async () => {
    const w = new RowWindow(2);
    expect(w.enter()).toBeUndefined();
    expect(w.enter()).toBeUndefined();
    w.started();
    w.started();
    let entered = false;
    void w.enter()!.then(() => (entered = true));
    await Promise.resolve();
    expect(entered).toBe(false);
    w.ended();
    await waitFor(() => entered, 1000, 'the third row to enter');
  });

  it('grows while a reader waits, with no row settling (every call slow), as the size it follows grows', async () => {
    let size = 3;
    const w = new RowWindow(() => size);
    for (let i = 0; i < 3; i += 1) expect(w.enter()).toBeUndefined();
    let entered = 0;
    for (let i = 0; i < 2; i += 1) void w.enter()!.then(() => (entered += 1));
    await settle();
    expect(entered).toBe(0);
    size = 5;
    await waitFor(() => entered === 2, 2000, 'the waiting rows to enter once the window grew');
    expect(w.size).toBe(5);
  });

  it('shrinks as answers speed up: no row enters past the smaller size until enough have ended', async () => {
    let size = 4;
    const w = new RowWindow(() => size);
    for (let i = 0; i < 4; i += 1) {
      expect(w.enter()).toBeUndefined();
      w.started();
    }
    size = 2;
    let entered = false;
    void w.enter()!.then(() => (entered = true));
    w.ended();
    w.ended();
    await settle();
    expect(entered).toBe(false);
    w.ended();
    await waitFor(() => entered, 1000, 'a row to enter once fewer than 2 are in flight');
  });

  it('windowSize: every call slot of the services used plus 15%, at least 16', () => {
    expect(windowSize({ workflow: 626, bureau: 626, account: 151 }, new Set(['bureau', 'workflow']))).toBe(1440);
    expect(windowSize({ workflow: 8, bureau: 8, account: 8 }, new Set(['bureau']))).toBe(16);
  });
});
