/**
 * Every source path a comment under src/ or a package's src/ (packages/NAME/src/) names leads to a file that is there,
 * so that a pointer cannot go stale when a file moves (five once had). A path is read as the
 * comment means it: from the commenting file's folder (`./x.ts`, `../y/z.ts`), from src/ (`pipeline/run.ts`), from
 * the repository (`src/db/url.ts`, `docs/limiter.md`), or, in a package, from the package's folder or its src/
 * (`scripts/build-pincode-table.ts`, `design/estimators.ts`); `.js` names the `.ts` beside it, as imports do.
 * Paths into other projects (a library's own source, cited as the reason for a choice) are listed below with
 * whose they are.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const PACKAGES = join(ROOT, 'packages');
/** Each package's folder: its sources are in src/ under it. */
const PACKAGE_DIRS = readdirSync(PACKAGES).map((name) => join(PACKAGES, name));

/** Paths that name another project's files: `comment text` -> whose. */
const OTHER_PROJECTS: Readonly<Record<string, string>> = {
  'src/redis/*.lua': 'Bottleneck 2.19.5',
  'lib/core/errors.js': 'undici',
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The comments of a TypeScript file, with their line numbers: strings, template literals and regular expression
 * literals are skipped, as far as a comment's `//` or `/*` could be mistaken inside them.
 */
function commentsOf(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lineAt = (i: number) => text.slice(0, i).split('\n').length;
  let i = 0;
  // Whether a `/` here starts a regular expression (after an operator or a bracket) rather than a division.
  let regexAllowed = true;
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i);
      const stop = end === -1 ? text.length : end;
      out.push({ line: lineAt(i), text: text.slice(i + 2, stop) });
      i = stop;
    } else if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      const stop = end === -1 ? text.length : end;
      out.push({ line: lineAt(i), text: text.slice(i + 2, stop) });
      i = stop + 2;
    } else if (c === "'" || c === '"' || c === '`') {
      i += 1;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      i += 1;
      regexAllowed = false;
    } else if (c === '/' && regexAllowed) {
      i += 1;
      let inClass = false;
      while (i < text.length && (inClass || text[i] !== '/') && text[i] !== '\n') {
        if (text[i] === '\\') i += 1;
        else if (text[i] === '[') inClass = true;
        else if (text[i] === ']') inClass = false;
        i += 1;
      }
      i += 1;
      regexAllowed = false;
    } else {
      if (!/\s/.test(c))
        regexAllowed =
          /[(,=:[!&|?{};+\-*%<>~^]/.test(c) ||
          (/[a-z]/.test(c) && /\b(return|typeof|case|in|of|void|throw)$/.test(text.slice(Math.max(0, i - 6), i + 1)));
      i += 1;
    }
  }
  return out;
}

/** The file paths a comment names: with a folder or a leading `./`, ending in a source or document suffix. */
function pathsIn(comment: string): string[] {
  const found =
    comment.match(/(?<![\w@/.-])(?:\.{1,2}\/)*[\w*-]+(?:\/[\w*.-]+)*\.(?:ts|js|cjs|mjs|md|json|lua)(?![\w/])/g) ?? [];
  return found.filter((p) => p.includes('/'));
}

function resolves(file: string, path: string): boolean {
  const asTs = (p: string) => [p, p.replace(/\.js$/, '.ts')];
  const pkg = PACKAGE_DIRS.find((dir) => file.startsWith(`${dir}/`));
  const candidates = path.startsWith('.')
    ? asTs(resolve(dirname(file), path))
    : [
        ...asTs(join(SRC, path)),
        ...asTs(join(ROOT, path)),
        ...asTs(resolve(dirname(file), path)),
        ...(pkg ? [...asTs(join(pkg, path)), ...asTs(join(pkg, 'src', path))] : []),
      ];
  return candidates.some((c) => existsSync(c));
}

describe('paths named in comments', () => {
  it('finds comments and the paths in them, not code', () => {
    const text =
      "const u = new URL('./worker.js', import.meta.url); // see ./thread.ts\nconst r = /https?:\\/\\/x.ts/; /* pipeline/run.ts and `src/db/url.ts` */";
    expect(commentsOf(text).flatMap((c) => pathsIn(c.text))).toEqual([
      './thread.ts',
      'pipeline/run.ts',
      'src/db/url.ts',
    ]);
    expect(pathsIn('node-postgres#2187, pg-copy-streams#115, a.ts alone, e.g. 1.5.ts')).toEqual([]);
  });

  it("every source path a comment under src/ or a package's src/ names is there", () => {
    const stale: string[] = [];
    let named = 0;
    for (const file of [SRC, ...PACKAGE_DIRS.map((dir) => join(dir, 'src'))].flatMap(sources)) {
      for (const c of commentsOf(readFileSync(file, 'utf8'))) {
        for (const path of pathsIn(c.text)) {
          if (OTHER_PROJECTS[path] !== undefined) continue;
          named += 1;
          if (!resolves(file, path)) stale.push(`${relative(ROOT, file)}:${c.line} names ${path}`);
        }
      }
    }
    expect(stale).toEqual([]);
    // The check reads the comments at all: hundreds of pointers are there.
    expect(named).toBeGreaterThan(200);
  });
});
