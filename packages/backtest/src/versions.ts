/**
 * Which strategy version decided each side of a comparison (`workflow_version` of the normalised result): a
 * side whose keys were decided by several versions (a vendor deploying new rules mid-run) blends them in every
 * figure, and two sides decided by different versions compare strategies no one may have meant to. Counted over
 * the joined keys of each side; with `--by-version` the figures are broken down by the pair of versions.
 */
import type { NormalisedResult } from '@bre-batch/core/types';

/** The version a stage's result names, `(none)` when it names none, null when the stage did not run. */
export function versionOfResult(result: NormalisedResult | undefined): string | null {
  if (!result || result.skipped === true) return null;
  const v = result.workflow_version;
  return typeof v === 'string' && v !== '' ? v : '(none)';
}

/** A key's segment under `--by-version`: A's version and B's (`v1 → v2`), or one when they agree. */
export function versionPair(a: string | null, b: string | null): string {
  const x = a ?? '(not run)';
  const y = b ?? '(not run)';
  return x === y ? x : `${x} → ${y}`;
}

export interface VersionFigures {
  /** Keys of each side by the version that decided them (stages that did not run left out). */
  readonly a: Readonly<Record<string, number>>;
  readonly b: Readonly<Record<string, number>>;
  readonly a_mixed: boolean;
  readonly b_mixed: boolean;
  /** The two sides were decided by different versions (each one version, not the same). */
  readonly differ: boolean;
  /** What a reader must know, in words (empty when each side has one version, the same or as expected). */
  readonly notes: readonly string[];
}

export class VersionTally {
  readonly #a = new Map<string, number>();
  readonly #b = new Map<string, number>();

  add(a: string | null, b: string | null): void {
    if (a !== null) this.#a.set(a, (this.#a.get(a) ?? 0) + 1);
    if (b !== null) this.#b.set(b, (this.#b.get(b) ?? 0) + 1);
  }

  /** Null when neither side's results carry a version (a stage of features only). */
  figures(byVersion: boolean): VersionFigures | null {
    const real = (m: Map<string, number>) => [...m.keys()].filter((k) => k !== '(none)');
    if (real(this.#a).length === 0 && real(this.#b).length === 0) return null;
    const a = Object.fromEntries(this.#a);
    const b = Object.fromEntries(this.#b);
    const aMixed = this.#a.size > 1;
    const bMixed = this.#b.size > 1;
    const list = (m: Map<string, number>) => [...m].map(([v, n]) => `${v} (${n} keys)`).join(', ');
    const hint = byVersion ? '' : '; --by-version breaks the figures down by version';
    const notes: string[] = [];
    if (aMixed) notes.push(`side A mixes strategy versions: ${list(this.#a)}; its figures blend them${hint}`);
    if (bMixed) notes.push(`side B mixes strategy versions: ${list(this.#b)}; its figures blend them${hint}`);
    const differ =
      !aMixed && !bMixed && this.#a.size === 1 && this.#b.size === 1 && real(this.#a)[0] !== real(this.#b)[0];
    if (differ)
      notes.push(`the sides were decided by different strategy versions: A ${list(this.#a)}, B ${list(this.#b)}`);
    return { a, b, a_mixed: aMixed, b_mixed: bMixed, differ, notes };
  }
}
