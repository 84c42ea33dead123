/**
 * Secrets that must never reach a file or a log: the auth token, report URLs, file passwords and any value
 * a stage marked secret. Everything written or printed goes through `scrub`.
 */
export class Redactor {
  readonly #secrets = new Set<string>();

  add(value: string | undefined): void {
    // Very short values would blank out ordinary text; the token and URLs are long.
    if (value && value.length >= 6) this.#secrets.add(value);
  }

  scrub(text: string): string {
    let out = text;
    for (const s of this.#secrets) if (out.includes(s)) out = out.split(s).join('[secret]');
    return out;
  }
}
