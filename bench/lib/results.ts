// Writing results: bench/results/<YYYY-MM-DD>-<scenario>[-embedded].json and .md (prefixed `smoke-` for smoke
// runs, `-embedded` for runs on the embedded server), and the table printed to the terminal.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Machine } from './machine.ts';
import type { Metric, ScenarioResult } from './scenario.ts';
import type { Settings } from './settings.ts';
import { formatNumber } from './util.ts';

export interface ResultRecord {
  scenario: string;
  title: string;
  status: 'passed' | 'missed targets' | 'failed';
  /** ISO-8601 start of the scenario. */
  date: string;
  durationSeconds: number;
  command: string;
  smoke: boolean;
  machine: Machine;
  settings: Settings;
  measures: string;
  result: ScenarioResult | undefined;
  error: string | undefined;
}

const fmtValue = (metric: Metric): string =>
  metric.value === null || Number.isNaN(metric.value)
    ? 'n/a'
    : `${formatNumber(metric.value)}${metric.unit && metric.unit !== '' ? ` ${metric.unit}` : ''}`;

const fmtPass = (metric: Metric): string => (metric.pass === undefined ? '' : metric.pass ? 'yes' : 'NO');

function rows(record: ResultRecord): string[][] {
  return (record.result?.metrics ?? []).map((metric) => [
    metric.name,
    fmtValue(metric),
    metric.target ?? '',
    fmtPass(metric),
  ]);
}

const HEADER = ['metric', 'value', 'target', 'met'];

/** The result as an aligned text table. */
export function textTable(record: ResultRecord): string {
  const all = [HEADER, ...rows(record)];
  const widths = HEADER.map((_, column) => Math.max(...all.map((row) => row[column]!.length)));
  const line = (row: string[]) =>
    row
      .map((cell, column) => (column === 1 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ');
  return [line(HEADER), widths.map((width) => '-'.repeat(width)).join('  '), ...all.slice(1).map(line)].join(
    '\n',
  );
}

function settingsLine(settings: Settings): string {
  return Object.entries(settings)
    .filter(([name, value]) => name !== 'smoke' && value !== undefined)
    .map(([name, value]) => `${name} ${Array.isArray(value) ? value.join(',') : String(value)}`)
    .join(', ');
}

function markdown(record: ResultRecord): string {
  const m = record.machine;
  const lines = [
    `# Benchmark ${record.scenario}${record.smoke ? ' (smoke run)' : ''}`,
    '',
    record.title,
    '',
    `- Date: ${record.date}`,
    `- Command: \`${record.command}\``,
    `- Status: ${record.status}${record.error ? ` (${record.error.split('\n')[0]})` : ''}`,
    `- Duration: ${record.durationSeconds} s`,
    `- Settings: ${settingsLine(record.settings)}`,
    `- Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB memory, ${m.os}`,
    `- Node.js ${m.node}; ${m.postgres ?? 'no PostgreSQL'}`,
    `- Load average (1 min) at start: ${m.loadAverage}`,
    `- Code: ${m.gitCommit ?? 'unknown commit'}`,
    '',
    '## Results',
    '',
    `| ${HEADER.join(' | ')} |`,
    `| ${HEADER.map((_, index) => (index === 1 ? '---:' : '---')).join(' | ')} |`,
    ...rows(record).map((row) => `| ${row.join(' | ')} |`),
    '',
    "Targets are the issue's, stated for 2-core machines with an external PostgreSQL.",
    '',
  ];
  const problems = record.result?.problems ?? [];
  const notes = record.result?.notes ?? [];
  if (record.error) lines.push('## Error', '', '```', record.error, '```', '');
  if (problems.length > 0) lines.push('## Problems', '', ...problems.map((problem) => `- ${problem}`), '');
  if (notes.length > 0) lines.push('## Notes', '', ...notes.map((note) => `- ${note}`), '');
  lines.push(
    '## What it measures',
    '',
    record.measures,
    '',
    'Full figures: the JSON file beside this one.',
    '',
  );
  return lines.join('\n');
}

/** Writes the JSON and markdown files; returns their paths. */
export async function writeResult(resultsDir: string, record: ResultRecord): Promise<string[]> {
  await mkdir(resultsDir, { recursive: true });
  // A run on the embedded server is named apart, so that it sits beside the external server's run of the day.
  const server = record.settings.databaseUrl === undefined ? '-embedded' : '';
  const base = `${record.smoke ? 'smoke-' : ''}${record.date.slice(0, 10)}-${record.scenario}${server}`;
  const json = path.join(resultsDir, `${base}.json`);
  const md = path.join(resultsDir, `${base}.md`);
  await writeFile(json, `${JSON.stringify(record, null, 2)}\n`);
  await writeFile(md, markdown(record));
  return [json, md];
}
