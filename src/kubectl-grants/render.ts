import { dump } from 'js-yaml';
import type { Enforcement, Explanation } from '../verdict/explanation.js';
import type { WhoCanRow } from './who-can.js';

export type OutputFormat = 'table' | 'json' | 'yaml';

/** Columns padded to their widest cell, as kubectl prints them. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

function enforcementCell(enforcement: Enforcement | undefined): string {
  if (enforcement === undefined) return '-';
  const generation = enforcement.current
    ? ''
    : ` (generation ${enforcement.observedGeneration ?? '?'} of ${enforcement.generation ?? '?'})`;
  return `${enforcement.status}${generation}`;
}

/** One row per object; a delegation's owner's objects follow it, indented. */
function explanationRows(explanation: Explanation, depth = 0): string[][] {
  return explanation.objects.flatMap((object) => [
    [
      `${'  '.repeat(depth)}${object.kind}`,
      object.ref || '(none)',
      object.policyId ?? '-',
      object.reason,
      enforcementCell(object.enforcement),
      object.message,
    ],
    ...(object.owner ? explanationRows(object.owner, depth + 1) : []),
  ]);
}

export function renderExplanation(explanation: Explanation, format: OutputFormat): string {
  if (format === 'json') return JSON.stringify(explanation, null, 2);
  if (format === 'yaml') return dump(explanation).trimEnd();
  const { subject, itemId, accessType } = explanation;
  const head = [
    `${subject.type} ${subject.id} ${accessType} on ${itemId}: ${explanation.allowed ? 'ALLOWED' : 'DENIED'}`,
    explanation.message,
    ...(explanation.disagreement ? [`WARNING: ${explanation.disagreement}`] : []),
  ];
  const rows = explanationRows(explanation);
  return [...head, '', table(['KIND', 'OBJECT', 'POLICY', 'REASON', 'ENFORCED', 'MESSAGE'], rows)].join('\n');
}

export function renderWhoCan(rows: WhoCanRow[], format: OutputFormat): string {
  if (format === 'json') return JSON.stringify(rows, null, 2);
  if (format === 'yaml') return dump(rows).trimEnd();
  return table(
    ['KIND', 'OBJECT', 'POLICY', 'SUBJECT', 'ACCESS', 'EXPIRY'],
    rows.map((row) => [row.kind, row.ref, row.policyId, row.subject, row.access, row.expiry]),
  );
}
