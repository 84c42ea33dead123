/**
 * `.state/spend.json`: what the folder's calls cost, so that a resumed folder's spend is its whole spend, a kill
 * included. It holds the earlier sessions summed, each session's rows and spend (the retry share `--plan` gives
 * as a range) and this session's counts, attempts still out included, and a reserve: the attempts each priced
 * service may start before the state is written again (RESERVE_ATTEMPTS), counted billed in advance. The state
 * is written when a service has started that many attempts since the last write (before the last of them is
 * sent), every second when the counts changed, and exact at the end: whenever a process dies, the file's count
 * is at least what the server may bill, with no write per event-loop turn. An attempt a kill cut while it was
 * out, and the reserve, count as billed in the next session: the count errs on the side of the bill, by at most
 * the reserve and the attempts out per service.
 *
 * The file is two fixed-size slots written in turn with one positioned write each (the state and a newline at
 * the slot's start), the newer (by `seq`) read back: a write torn by a power cut leaves the other slot whole.
 */
import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { addCounts, emptyCounts, type Prices, type SpendCounts, type SpendMeter } from '../limits/spend.js';
import { perService, SERVICES, type ServiceName } from '@bre-batch/core/types';
import { FILES } from '@bre-batch/formats/files';

const SLOT = 4096;
/**
 * Attempts a priced service may start between two writes of the state. Each write was once made before every
 * turn's journal lines, about one write per two rows of a fast run (2% of its CPU); this many a write is a few
 * a second at thousands of rows a second, and a kill -9 overstates the bill by at most this many calls.
 */
export const RESERVE_ATTEMPTS = 64;
/** Sessions kept for the retry share (the oldest are folded into the totals only). */
const SESSIONS_KEPT = 40;

/** One earlier session: the rows it wrote and what its calls cost. */
interface SpendSession {
  readonly rows: number;
  readonly micros: number;
  readonly attempts: number;
  readonly billed: number;
}

/** The file's content. */
interface SpendState {
  readonly v: 1;
  readonly seq: number;
  readonly currency: string;
  /** The earlier sessions summed (a kill's attempts out counted billed). */
  readonly before: SpendCounts;
  readonly sessions: readonly SpendSession[];
  /** The session that wrote it: its counts, the attempts out and their price, the rows it wrote. */
  readonly now: SpendCounts & {
    readonly pending: Record<ServiceName, number>;
    readonly pending_micros: Record<ServiceName, number>;
    /** Attempts that may start before the next write, and their price at most (absent before a reserve was kept). */
    readonly reserve?: Record<ServiceName, number>;
    readonly reserve_micros?: Record<ServiceName, number>;
    readonly rows: number;
  };
}

/** What a folder's earlier sessions spent, as a new session finds it. */
export interface SpendHistory {
  readonly currency: string | undefined;
  readonly before: SpendCounts;
  readonly sessions: readonly SpendSession[];
}

function parseSlot(text: string): SpendState | undefined {
  try {
    const s = JSON.parse(text) as SpendState;
    return s && s.v === 1 && typeof s.seq === 'number' ? s : undefined;
  } catch {
    return undefined;
  }
}

function counts(c: Partial<SpendCounts> | undefined): SpendCounts {
  const e = emptyCounts();
  for (const svc of SERVICES) {
    e.billed[svc] = c?.billed?.[svc] ?? 0;
    e.micros[svc] = c?.micros?.[svc] ?? 0;
    e.attempts[svc] = c?.attempts?.[svc] ?? 0;
  }
  return e;
}

const total = (r: Record<ServiceName, number>): number => r.workflow + r.bureau + r.account;

/** The newest whole state in the file, or undefined (no file: a folder without spend yet). */
function readState(dir: string): SpendState | undefined {
  const path = join(dir, FILES.spend);
  if (!existsSync(path)) return undefined;
  const buf = readFileSync(path);
  const a = parseSlot(slotText(buf.subarray(0, SLOT)));
  const b = parseSlot(slotText(buf.subarray(SLOT, 2 * SLOT)));
  if (a && b) return a.seq >= b.seq ? a : b;
  return a ?? b;
}

/** The folder's spend before this session: every session the file knows of, summed, the last one's attempts out counted billed. */
export function readSpendHistory(dir: string): SpendHistory {
  const st = readState(dir);
  if (!st) return { currency: undefined, before: emptyCounts(), sessions: [] };
  const before = counts(st.before);
  const now = counts(st.now);
  addCounts(before, now);
  // The attempts a kill cut while they were out, and those it could have started since the last write (the
  // reserve: zero after a session's end), count as billed.
  const unsure = perService((svc) => (st.now.pending?.[svc] ?? 0) + (st.now.reserve?.[svc] ?? 0));
  const unsureMicros = perService((svc) => (st.now.pending_micros?.[svc] ?? 0) + (st.now.reserve_micros?.[svc] ?? 0));
  for (const svc of SERVICES) {
    before.billed[svc] += unsure[svc];
    before.micros[svc] += unsureMicros[svc];
  }
  const last: SpendSession = {
    rows: st.now.rows ?? 0,
    micros: total(now.micros) + total(unsureMicros),
    attempts: total(now.attempts),
    billed: total(now.billed) + total(unsure),
  };
  const sessions = [...(st.sessions ?? [])];
  if (last.attempts > 0 || last.rows > 0) sessions.push(last);
  return { currency: st.currency, before, sessions: sessions.slice(-SESSIONS_KEPT) };
}

/** One state into its slot (by its `seq`), with one positioned write. */
function writeSlot(fd: number, state: SpendState, text = JSON.stringify(state)): void {
  // Too many sessions for a slot: the oldest ones go (their spend stays in `before`).
  if (text.length >= SLOT - 1) text = JSON.stringify({ ...state, sessions: state.sessions.slice(-5) });
  // The state and its newline only, not the whole slot: it is written before each turn's journal lines, and
  // the reader stops at the first newline (what an earlier, longer state left after it is never read).
  writeSync(fd, `${text}\n`, (state.seq % 2) * SLOT, 'utf8');
}

/** A slot's state: its text up to the first newline (an older bre-batch padded it with spaces). */
function slotText(slot: Buffer): string {
  const end = slot.indexOf(0x0a);
  return slot
    .subarray(0, end === -1 ? slot.length : end)
    .toString('utf8')
    .trim();
}

/**
 * A new folder's file holding an earlier spend and no session of its own (`merge`: the shards' spend summed),
 * so that a run resuming the folder counts it as its earlier sessions' and checks its currency.
 */
export function writeSpendHistory(dir: string, history: SpendHistory & { readonly currency: string }): void {
  const zero = emptyCounts();
  const fd = openSync(join(dir, FILES.spend), 'w', 0o644);
  try {
    writeSlot(fd, {
      v: 1,
      seq: 2,
      currency: history.currency,
      before: history.before,
      sessions: history.sessions.slice(-SESSIONS_KEPT),
      now: { ...zero, pending: perService(() => 0), pending_micros: perService(() => 0), rows: 0 },
    });
  } finally {
    closeSync(fd);
  }
}

/** The most one attempt of `service` costs: its price, or for the workflow service its dearest workflow's. */
function dearest(prices: Prices, service: ServiceName): number {
  const own = prices.service[service] ?? 0;
  return service === 'workflow' ? Math.max(own, ...Object.values(prices.workflow)) : own;
}

/** This session's writer of the file. */
export class SpendFile {
  #fd: number;
  #seq: number;
  #dirty = true;
  #timer: NodeJS.Timeout;
  #closed = false;
  /** Each service's attempts when the state was last written: the reserve is used from there. */
  readonly #mark = perService(() => 0);
  /** The reserve a written state holds: RESERVE_ATTEMPTS for a priced service, at its dearest price. */
  readonly #reserve: Record<ServiceName, number>;
  readonly #reserveMicros: Record<ServiceName, number>;

  /** The state's parts no session changes (currency, before, sessions), serialised once. */
  #head: string | undefined;

  private constructor(
    fd: number,
    seq: number,
    private readonly meter: SpendMeter,
    private readonly history: SpendHistory,
    private readonly rows: () => number,
    private readonly onFailure: (err: Error) => void,
  ) {
    this.#fd = fd;
    this.#seq = seq;
    const price = perService((svc) => dearest(meter.prices, svc));
    this.#reserve = perService((svc) => (price[svc] > 0 ? RESERVE_ATTEMPTS : 0));
    this.#reserveMicros = perService((svc) => this.#reserve[svc] * price[svc]);
    // Called as an attempt starts (before it is sent) and as it ends: the state is written before a service
    // starts more attempts than the written reserve covers.
    meter.onChange = () => {
      this.#dirty = true;
      const a = meter.session.attempts;
      const m = this.#mark;
      if (
        a.workflow - m.workflow >= RESERVE_ATTEMPTS ||
        a.bureau - m.bureau >= RESERVE_ATTEMPTS ||
        a.account - m.account >= RESERVE_ATTEMPTS
      )
        this.#flushQuietly();
    };
    this.#timer = setInterval(() => this.#flushQuietly(), 1000);
    this.#timer.unref();
  }

  /** Opens the folder's file for this session (the history is what `readSpendHistory` found). */
  static open(
    dir: string,
    meter: SpendMeter,
    history: SpendHistory,
    rows: () => number,
    onFailure: (err: Error) => void,
  ): SpendFile {
    const seq = readState(dir)?.seq ?? 0;
    const fd = openSync(join(dir, FILES.spend), existsSync(join(dir, FILES.spend)) ? 'r+' : 'w+', 0o644);
    const file = new SpendFile(fd, seq, meter, history, rows, onFailure);
    // The earlier sessions folded now, and this session's first reserve: a kill before its first call must not
    // count them twice, nor its first calls not at all.
    file.#write();
    return file;
  }

  /**
   * Writes the counts if they changed (one positioned write of one slot): with a new reserve, or `final`, the
   * session's end, with none.
   */
  #write(final = false): void {
    if (!this.#dirty || this.#closed) return;
    this.#dirty = false;
    const m = this.meter;
    this.#seq += 1;
    for (const svc of SERVICES) this.#mark[svc] = m.session.attempts[svc];
    const zero = final ? perService(() => 0) : undefined;
    const state: SpendState = {
      v: 1,
      seq: this.#seq,
      currency: m.prices.currency,
      before: this.history.before,
      sessions: this.history.sessions,
      now: {
        ...m.session,
        pending: m.pending,
        pending_micros: m.pendingMicros,
        reserve: zero ?? this.#reserve,
        reserve_micros: zero ?? this.#reserveMicros,
        rows: this.rows(),
      },
    };
    // What the session does not change is serialised once.
    this.#head ??= JSON.stringify({ currency: state.currency, before: state.before, sessions: state.sessions }).slice(
      1,
      -1,
    );
    writeSlot(this.#fd, state, `{"v":1,"seq":${state.seq},${this.#head},"now":${JSON.stringify(state.now)}}`);
  }

  #flushQuietly(): void {
    try {
      this.#write();
    } catch (err) {
      this.onFailure(err as Error);
    }
  }

  /** The exact counts written, no reserve (the session has ended), then the file closed. */
  close(): void {
    if (this.#closed) return;
    clearInterval(this.#timer);
    try {
      this.#dirty = true;
      this.#write(true);
    } finally {
      this.#closed = true;
      closeSync(this.#fd);
    }
  }
}
