/** A moving estimate of how long a kind of task takes (exponentially weighted; recent runs count most). */
export class DurationEstimate {
  private estimateMs = 0;

  constructor(
    private readonly now: () => number = performance.now.bind(performance),
    private readonly weight = 0.2,
  ) {}

  /** Milliseconds; 0 until a task was measured. */
  typicalMs(): number {
    return this.estimateMs;
  }

  async measure<T>(task: () => Promise<T>): Promise<T> {
    const start = this.now();
    try {
      return await task();
    } finally {
      this.record(this.now() - start);
    }
  }

  private record(ms: number): void {
    this.estimateMs = this.estimateMs === 0 ? ms : this.estimateMs + this.weight * (ms - this.estimateMs);
  }
}
