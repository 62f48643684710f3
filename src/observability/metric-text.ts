/**
 * One series' value in a scrape, e.g.
 * `policygrant_http_rate_limited_requests_total{service="acl",class="read"}`; 0 if absent.
 */
export function metricValue(metrics: string, series: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.split(' ')[1] ?? 0);
}

/** The sum over a metric's series whose labels contain `label` (e.g. `code_class="5xx"`); 0 if none. */
export function metricSum(metrics: string, name: string, label: string): number {
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && line.includes(label))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}
