/**
 * Reports (ADMIN, RELATORIOS or a `reports` role): attendance per class per week as a chart and a
 * table, the rows behind it as the server's CSV, the first-time visitors and the conflicts the
 * kiosk's admins see. The chart is SVG drawn here (decision 0035): bars are `<rect>`s with attributes
 * and classes, never a `style`, so the CSP holds.
 */
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { type ConflictSide, ReportedConflict } from '../../../domain/projection.js';
import { h, replaceChildren } from '../../../kiosk/app/dom.js';
import { type WeekCell, weeklyAttendance } from '../../../rules/weeklyAttendance.js';
import { apiCall, apiText } from '../api.js';
import { type DateInput, dateField, dateInput } from '../dateInput.js';
import { localDay } from '../dates.js';
import type { Shell } from '../shell.js';
import { day, download, row, sayFailure, section, svg, table, when } from './adminKit.js';
import { type AdminT, adminTranslator } from './adminText.js';
import { labelled } from './children.js';

const Classes = t.type({ items: t.array(t.type({ classId: t.string, name: t.string })) });
const Attendance = t.type({
  rows: t.array(
    t.type({
      date: t.string,
      classId: t.union([t.string, t.null]),
      studentId: t.string,
      displayName: t.union([t.string, t.null]),
      present: t.boolean,
    }),
  ),
});
const Visitors = t.type({
  items: t.array(
    t.type({ studentId: t.string, displayName: t.string, classId: t.string, createdAt: t.string }),
  ),
  truncated: t.boolean,
});
const Conflicts = t.type({ items: t.array(ReportedConflict) });

const DAY_MS = 86_400_000;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export const reportsPage = (shell: Shell): void => {
  const at = adminTranslator();
  const now = Date.now();
  const from = dateInput(localDay(new Date(now - 8 * 7 * DAY_MS)), { required: '' });
  const to = dateInput(localDay(new Date(now)), { required: '' });
  // What is no date is sent as typed ('' when empty): the server's 400 says what is wrong.
  const dayOf = (d: DateInput) => d.iso() ?? d.input.value;
  const classSelect = h('select', {}, h('option', { attrs: { value: '' } }, at('reports.allClasses')));
  const chart = h('figure', { className: 'chart', attrs: { 'data-test': 'attendance-chart' } });
  const weekly = h('div');
  const visitors = h('div', { attrs: { 'data-test': 'visitors' } });
  const conflicts = h('div', { attrs: { 'data-test': 'conflicts' } });
  const classNames = new Map<string, string>();
  const query = () => {
    const q = new URLSearchParams({ from: dayOf(from), to: dayOf(to) });
    if (classSelect.value !== '') q.set('classId', classSelect.value);
    return q;
  };
  const csv = h(
    'button',
    {
      attrs: { type: 'button' },
      onClick: () => {
        void (async () => {
          const a = await apiText(`/api/v1/reports/attendance?${query()}`, 'text/csv');
          if (a.status !== 200) return sayFailure(shell, at, { status: a.status, json: undefined });
          download(`presenca-${dayOf(from)}-${dayOf(to)}.csv`, a.text, 'text/csv;charset=utf-8');
        })();
      },
    },
    at('reports.csv'),
  );

  const show = async () => {
    const q = query();
    const a = await apiCall('GET', `/api/v1/reports/attendance?${q}`);
    const d = Attendance.decode(a.json);
    if (a.status !== 200 || E.isLeft(d)) return sayFailure(shell, at, a);
    const names = new Map(d.right.rows.map((r) => [r.studentId, r.displayName ?? r.studentId]));
    const cells = weeklyAttendance(d.right.rows);
    replaceChildren(chart, ...drawChart(at, cells, classNames));
    replaceChildren(
      weekly,
      table(
        [at('reports.week'), at('reports.class'), at('reports.present'), at('reports.absent')],
        cells.map((c) =>
          row(day(c.week), classNames.get(c.classId) ?? c.classId, String(c.present), String(c.absent)),
        ),
        at('reports.none'),
        'attendance-table',
      ),
    );
    const v = await apiCall('GET', `/api/v1/reports/visitors?${q}`);
    const vd = Visitors.decode(v.json);
    if (E.isRight(vd))
      replaceChildren(
        visitors,
        vd.right.truncated
          ? h('p', {}, at('reports.visitorsTruncated', { count: vd.right.items.length }))
          : null,
        table(
          [at('col.name'), at('reports.class'), at('reports.registered')],
          vd.right.items.map((x) =>
            row(
              h('a', { attrs: { href: `#/child/${x.studentId}` } }, x.displayName),
              classNames.get(x.classId) ?? x.classId,
              when(x.createdAt),
            ),
          ),
          at('reports.visitorsNone'),
        ),
      );
    // Conflicts are filtered by detection instant: the whole last day is `to`'s next midnight, exclusive.
    const c = await apiCall(
      'GET',
      `/api/v1/reports/conflicts?from=${dayOf(from)}T00:00:00.000Z&to=${isoDay(Date.parse(dayOf(to)) + DAY_MS)}T00:00:00.000Z&limit=200`,
    );
    const cd = Conflicts.decode(c.json);
    if (E.isRight(cd)) {
      const side = (s: t.TypeOf<typeof ConflictSide>) =>
        `${s.change.type} · ${s.role} · ${when(s.clientTimestamp)}`;
      replaceChildren(
        conflicts,
        table(
          [
            at('col.when'),
            at('col.name'),
            at('reports.aspect'),
            at('reports.winner'),
            at('reports.loser'),
            at('reports.policy'),
          ],
          cd.right.items.map((x) =>
            row(
              when(x.detectedAt),
              h('a', { attrs: { href: `#/child/${x.subjectId}` } }, names.get(x.subjectId) ?? x.subjectId),
              x.kind,
              // An offline check-in the admission rule would have refused: kept, so it wins over nothing.
              x.policy === 'ADMISSION_RULE' ? at('reports.admission') : side(x.winner),
              side(x.policy === 'ADMISSION_RULE' ? x.event : x.loser),
              x.policy === 'ADMISSION_RULE'
                ? x.refusals.map((r) => at(`reports.admission.${r.reason}`)).join(' · ')
                : x.policy,
            ),
          ),
          at('reports.conflictsNone'),
        ),
      );
    }
  };

  replaceChildren(
    shell.main,
    h('h1', {}, at('reports.title')),
    h(
      'form',
      {
        className: 'filters',
        onSubmit: (e) => {
          e.preventDefault();
          void show();
        },
      },
      dateField(at('reports.from'), from),
      dateField(at('reports.to'), to),
      labelled(at('reports.class'), classSelect),
      h('button', { attrs: { type: 'submit' } }, at('reports.show')),
    ),
    section(at('reports.attendance'), chart, weekly, h('p', {}, csv)),
    section(at('reports.visitors'), visitors),
    section(at('reports.conflicts'), conflicts),
  );
  void (async () => {
    // Reports are history: deactivated classes (0047) are named and may be chosen too.
    const classes = Classes.decode((await apiCall('GET', '/api/v1/classes?includeInactive=true')).json);
    if (E.isRight(classes))
      for (const c of classes.right.items) {
        classNames.set(c.classId, c.name);
        classSelect.append(h('option', { attrs: { value: c.classId } }, c.name));
      }
    await show();
  })();
};

const PALETTE = 6;
const W = 720;
const H = 240;
const PAD = { left: 40, bottom: 28, top: 12 };

/** Grouped bars: one group per week, one bar per class (present children), with a legend below. */
const drawChart = (
  at: AdminT,
  cells: ReadonlyArray<WeekCell>,
  classNames: ReadonlyMap<string, string>,
): Node[] => {
  if (cells.length === 0) return [h('figcaption', {}, at('reports.none'))];
  const weeks = [...new Set(cells.map((c) => c.week))];
  const classes = [...new Set(cells.map((c) => c.classId))];
  const max = Math.max(1, ...cells.map((c) => c.present));
  const plotH = H - PAD.top - PAD.bottom;
  const groupW = (W - PAD.left) / weeks.length;
  const barW = Math.max(2, (groupW * 0.8) / classes.length);
  const parts: SVGElement[] = [
    svg('line', { x1: PAD.left, y1: PAD.top + plotH, x2: W, y2: PAD.top + plotH, class: 'axis' }),
    svg('text', { x: PAD.left - 6, y: PAD.top + 10, class: 'tick', 'text-anchor': 'end' }, String(max)),
    svg('text', { x: PAD.left - 6, y: PAD.top + plotH, class: 'tick', 'text-anchor': 'end' }, '0'),
  ];
  weeks.forEach((week, wi) => {
    const x0 = PAD.left + wi * groupW + groupW * 0.1;
    parts.push(
      svg(
        'text',
        { x: x0 + (barW * classes.length) / 2, y: H - 8, class: 'tick', 'text-anchor': 'middle' },
        day(week),
      ),
    );
    for (const c of cells.filter((x) => x.week === week)) {
      const ci = classes.indexOf(c.classId);
      const barH = (c.present / max) * plotH;
      const name = classNames.get(c.classId) ?? c.classId;
      parts.push(
        svg(
          'rect',
          {
            x: x0 + ci * barW,
            y: PAD.top + plotH - barH,
            width: barW - 1,
            height: barH,
            class: `bar bar-${ci % PALETTE}`,
          },
          svg('title', {}, `${day(week)} · ${name}: ${c.present}`),
        ),
      );
    }
  });
  return [
    svg(
      'svg',
      { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': at('reports.chartLabel'), class: 'chart-svg' },
      ...parts,
    ),
    h(
      'figcaption',
      { className: 'legend' },
      ...classes.map((c, i) =>
        h(
          'span',
          { className: 'legend-item' },
          h('span', { className: `swatch bar-${i % PALETTE}` }),
          classNames.get(c) ?? c,
        ),
      ),
    ),
  ];
};
