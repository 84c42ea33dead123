/** What a route handler gets, and the state the account service keeps between calls. */
import type { Answer } from '../answers.js';
import type { Variant } from '../logic/workflows/common.js';
import type { Obj } from '../validate.js';

export interface AaFetchRecord {
  readonly from: number;
  readonly to: number;
  readonly handles: ReadonlySet<string>;
}

export interface ReportLink {
  readonly userId: string;
  readonly sessionId: string;
  readonly issuedAt: number;
  readonly from: number;
  readonly to: number;
  readonly handles: readonly string[];
}

/** Sandbox memory: bounded maps (oldest entries dropped first). */
export class AccountState {
  /** user_id|aa_session_id -> first status_check time (BSA processing start). */
  readonly bsaStarted = new Map<string, number>();
  /** user_id|aa_session_id -> the last AA fetch (range and consent handles seen). */
  readonly aaFetches = new Map<string, AaFetchRecord>();
  /** report token -> what the CSV link serves. */
  readonly reports = new Map<string, ReportLink>();

  static readonly MAX = 100_000;

  remember<K, V>(map: Map<K, V>, key: K, value: V): void {
    if (map.size >= AccountState.MAX && !map.has(key)) map.delete(map.keys().next().value as K);
    map.set(key, value);
  }
}

export interface RouteContext {
  readonly body: Obj;
  readonly requestId: string;
  /** The sandbox clock, ms. */
  readonly now: number;
  /** Origin of the sandbox (for links it hands out). */
  readonly baseUrl: string;
  readonly state: AccountState;
  readonly bsaReadyAfterMs: number;
  /** Path parameters (client_id, workflow endpoint). */
  readonly params: Readonly<Record<string, string>>;
  /** The version a call of a workflow endpoint answers with (a version switch, ../versions.ts); counts the call. */
  readonly variantOf: (endpoint: string, base: Variant) => Variant;
}

export type Handler = (ctx: RouteContext) => Answer;
