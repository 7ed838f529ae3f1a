/**
 * Attendance rows folded into weeks per class: the chart's and the table's numbers. Weeks start on
 * Sunday (decision 0035), the day most classes meet, so a Sunday and the Wednesday after it are one
 * week. Rows without a class are left out (a mark whose session and student are both gone).
 */
export interface WeekCell {
  /** The week's Sunday, `YYYY-MM-DD`. */
  readonly week: string;
  readonly classId: string;
  readonly present: number;
  readonly absent: number;
}

const DAY_MS = 86_400_000;

export const weekOf = (date: string): string => {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return new Date(ms - new Date(ms).getUTCDay() * DAY_MS).toISOString().slice(0, 10);
};

export const weeklyAttendance = (
  rows: ReadonlyArray<{ readonly date: string; readonly classId: string | null; readonly present: boolean }>,
): WeekCell[] => {
  const cells = new Map<string, { week: string; classId: string; present: number; absent: number }>();
  for (const r of rows) {
    if (r.classId === null) continue;
    const week = weekOf(r.date);
    const key = `${week}|${r.classId}`;
    const cell = cells.get(key) ?? { week, classId: r.classId, present: 0, absent: 0 };
    if (r.present) cell.present += 1;
    else cell.absent += 1;
    cells.set(key, cell);
  }
  return [...cells.values()].sort(
    (a, b) => a.week.localeCompare(b.week) || a.classId.localeCompare(b.classId),
  );
};
