/** An attempt as the client's `call` starts one, and a `next` dispatch that records what reached it. */
import type { Attempt, Dispatch } from '../../../src/http/layers/types.js';
import { NO_HEADERS } from '../../../src/http/layers/auth.js';

export function attempt(over: Partial<Attempt> = {}): Attempt {
  return {
    service: 'workflow',
    request: { path: '/x', headers: NO_HEADERS, body: '{}' },
    timeoutMs: 1000,
    number: 1,
    stageStats: undefined,
    sent: undefined,
    deadline: undefined,
    ...over,
  };
}

/** A dispatch answering from `answers` in turn (a function may throw or return); it keeps every attempt it saw. */
export function scripted<R>(answers: ((a: Attempt) => R | Promise<R>)[]): Dispatch<R> & { seen: Attempt[] } {
  const seen: Attempt[] = [];
  const fn = async (a: Attempt): Promise<R> => {
    seen.push(a);
    const next = answers.shift();
    if (!next) throw new Error('no answer scripted');
    return next(a);
  };
  return Object.assign(fn, { seen });
}
