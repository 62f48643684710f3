/** One series' value in a scrape, e.g. `http_rate_limited_requests_total{service="acl",class="read"}`; 0 if absent. */
export function metricValue(metrics: string, series: string): number {
  const line = metrics.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return Number(line?.split(' ')[1] ?? 0);
}
