/**
 * The report's "Strategy versions": for each workflow stage, the rows and decisions under each version its
 * answers carried, and when each version first answered; a mix of versions is said at the top of the section
 * (and marked on the throughput chart, ./render.ts).
 */
import { cells, table } from '@bre-batch/formats/page/html';
import { esc, fmtInt, fmtPct } from '@bre-batch/formats/page/svg';
import type { VersionsSummary } from '@bre-batch/formats';

/** The moments a stage's answers changed version (every first answer after the stage's first). */
export function versionMarks(v: VersionsSummary | null): { t: number; label: string }[] {
  return Object.entries(v ?? {}).flatMap(([stage, s]) =>
    s.first_answers.slice(1).map((f) => ({ t: Date.parse(f.at), label: `${stage}: ${f.version ?? '(none)'}` })),
  );
}

export function versionsSection(v: VersionsSummary | null): string {
  const stages = Object.entries(v ?? {});
  if (stages.length === 0) return '';
  const parts = ['<h2>Strategy versions</h2>'];
  for (const [stage, s] of stages) {
    const rows = Object.values(s.by_version).reduce((n, c) => n + c.rows, 0);
    parts.push(
      s.mixed
        ? `<p class="warn">Stage ${esc(stage)}: the results MIX ${fmtInt(Object.keys(s.by_version).length)} versions of the strategy. Figures over the whole run (approval rates, a comparison) blend them; <code>bre-batch compare --by-version</code> breaks them down.</p>`
        : `<p class="note">Stage ${esc(stage)}: one version answered every row.</p>`,
    );
    parts.push(
      table(
        ['version', 'workflow', 'decisions', 'rows', 'share'],
        Object.entries(s.by_version).map(([version, c]) =>
          cells(
            [
              esc(version),
              esc(c.workflow ?? '–'),
              esc(
                Object.entries(c.decisions)
                  .sort((a, b) => b[1] - a[1])
                  .map(([d, n]) => `${d} ${fmtInt(n)}`)
                  .join(', '),
              ),
              fmtInt(c.rows),
              fmtPct(rows > 0 ? c.rows / rows : 0),
            ],
            3,
          ),
        ),
      ),
    );
    if (s.first_answers.length > 0)
      parts.push(
        `<ul>${s.first_answers
          .map(
            (f, i) =>
              `<li>${esc(f.version ?? '(none)')} first answered ${esc(f.at)} (row ${fmtInt(f.row)}, session ${fmtInt(f.session)})${i === 0 ? '' : ': a change of strategy during the run'}</li>`,
          )
          .join('')}</ul>`,
      );
  }
  parts.push(
    '<p class="note">Counted over the rows in the results; a first answer refused by <code>--expect-version</code> is listed though its row was not written.</p>',
  );
  return parts.join('');
}
