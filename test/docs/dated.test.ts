/**
 * The guide carries no dated measurement: no load average and no commit hash on a page a user is sent to. The
 * benchmark diary (dates, loads, builds) lives in docs/history.md, and decision records carry their date as
 * records do; both are left out here. Code (blocks and spans) is left out too: a hashed column name is not a
 * commit.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sitePages } from '../../scripts/docs/site.js';

const ROOT = join(import.meta.dirname, '..', '..');

/** The prose of a page: fenced and indented code blocks and code spans removed. */
function prose(markdown: string): string[] {
  let fence = false;
  return markdown.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      return '';
    }
    if (fence || /^ {4}/.test(line)) return '';
    return line.replace(/`[^`]*`/g, '').replace(/\]\([^)]*\)/g, ']');
  });
}

const LOAD = /\bload average\b|\b(?:at|under) (?:a )?load\b|\bload \d/i;
/** Seven to forty hex digits with a letter and a digit among them: how a commit is named. */
const HASH = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/;

function dated(markdown: string): string[] {
  return prose(markdown).flatMap((line, i) => {
    const found: string[] = [];
    if (LOAD.test(line)) found.push(`line ${i + 1}: a load: ${line.trim().slice(0, 100)}`);
    if (HASH.test(line)) found.push(`line ${i + 1}: a commit: ${line.trim().slice(0, 100)}`);
    return found;
  });
}

describe('no guide page carries a load average or a commit hash', () => {
  const pages = sitePages(ROOT).filter((p) => !/^docs\/(history\.md|decisions\/)/.test(p));

  it('finds them, and leaves code alone', () => {
    expect(
      dated(
        [
          'Measured at load 2-10 on a shared machine.',
          'The build before (12fecbf) was slower.',
          'A column `decision_best_offer_loan_amount_1bb553b1` keeps its suffix.',
          '',
          '    git checkout 643b0d1',
          'Fifteen minutes, 2,000,000 rows, about 1.7 GB.',
        ].join('\n'),
      ).map((d) => d.split(':').slice(0, 2).join(':')),
    ).toEqual(['line 1: a load', 'line 2: a commit']);
  });

  it.each(pages)('%s', (page) => {
    expect(dated(readFileSync(join(ROOT, page), 'utf8'))).toEqual([]);
  });
});
