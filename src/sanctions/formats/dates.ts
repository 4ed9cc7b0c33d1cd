import { ownEntry } from '../../platform/lookup.ts';

// Dates of birth of list entries as ISO 8601 intervals (`1960-01-01/1960-12-31`): publishers give a day, a
// month or only a year, sometimes "circa" or a range, and a screened date agrees with an entry when it falls
// inside one of its intervals.

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

function lastDay(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Whether year, month and day name a real calendar day. */
export function isCalendarDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= lastDay(year, month);
}

interface Span {
  from: string;
  to: string;
}

function spanOf(year: number, month?: number, day?: number): Span | undefined {
  if (year < 1800 || year > 2200) return undefined;
  if (month === undefined) return { from: `${year}-01-01`, to: `${year}-12-31` };
  if (month < 1 || month > 12) return undefined;
  if (day === undefined) {
    return { from: `${year}-${pad(month)}-01`, to: `${year}-${pad(month)}-${pad(lastDay(year, month))}` };
  }
  if (!isCalendarDate(year, month, day)) return undefined;
  const date = `${year}-${pad(month)}-${pad(day)}`;
  return { from: date, to: date };
}

/** OFAC's spellings: `28 Jul 1963`, `Jul 1963`, `1963`. */
function ofacSpan(text: string): Span | undefined {
  const parts = text.trim().split(/\s+/);
  if (parts.length === 3) {
    const month = ownEntry(MONTHS, parts[1]!.slice(0, 3).toLowerCase());
    if (!/^\d{1,2}$/.test(parts[0]!) || month === undefined || !/^\d{4}$/.test(parts[2]!)) return undefined;
    return spanOf(Number(parts[2]), month, Number(parts[0]));
  }
  if (parts.length === 2) {
    const month = ownEntry(MONTHS, parts[0]!.slice(0, 3).toLowerCase());
    if (month === undefined || !/^\d{4}$/.test(parts[1]!)) return undefined;
    return spanOf(Number(parts[1]), month);
  }
  if (parts.length === 1 && /^\d{4}$/.test(parts[0]!)) return spanOf(Number(parts[0]));
  return undefined;
}

/** One year either side, as "circa" is read here. */
function widen(span: Span): Span {
  const year = (date: string, by: number) => `${Number(date.slice(0, 4)) + by}${date.slice(4)}`;
  return {
    from: `${year(span.from, -1).slice(0, 4)}-01-01`,
    to: `${year(span.to, 1).slice(0, 4)}-12-31`,
  };
}

/**
 * A date of birth as OFAC writes it in the SDN remarks after `DOB`: `28 Jul 1963`, `Jul 1963`, `1963`,
 * `circa 1963`, `1960 to 1962`, `01 Jan 1960 to 31 Dec 1962`. Anything else: undefined (ignored).
 */
export function ofacBirthInterval(text: string): string | undefined {
  let rest = text.trim();
  let circa = false;
  if (/^circa\s+/i.test(rest)) {
    circa = true;
    rest = rest.replace(/^circa\s+/i, '');
  }
  const [start, end] = rest.split(/\s+to\s+/i);
  const from = ofacSpan(start ?? '');
  const to = end === undefined ? from : ofacSpan(end);
  if (!from || !to || to.to < from.from) return undefined;
  const span = circa ? widen({ from: from.from, to: to.to }) : { from: from.from, to: to.to };
  return `${span.from}/${span.to}`;
}

/** An ISO 8601 date, complete or partial (`1954-09-13`, `1954-09`, `1954`), as OpenSanctions gives it. */
export function isoBirthInterval(text: string): string | undefined {
  const match = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(text.trim().slice(0, 10));
  if (!match) return undefined;
  const span = spanOf(
    Number(match[1]),
    match[2] === undefined ? undefined : Number(match[2]),
    match[3] === undefined ? undefined : Number(match[3]),
  );
  return span ? `${span.from}/${span.to}` : undefined;
}

/** Whether `date` (`YYYY-MM-DD`) falls in any of the intervals. */
export function withinAny(intervals: readonly string[], date: string): boolean {
  return intervals.some((interval) => {
    const [from, to] = interval.split('/');
    return from !== undefined && to !== undefined && date >= from && date <= to;
  });
}
