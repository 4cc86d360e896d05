/**
 * Paces a background job (a compaction) so it leaves most of the event
 * loop to the work it runs beside (commits). Yielding alone is not enough:
 * a committer that awaits each commit gets one commit in per yield, while
 * each of the job's steps takes milliseconds, so commits would slow to the
 * job's pace. After each step the job rests `restPerBusy` times as long as
 * the step took, so it uses at most 1 / (1 + restPerBusy) of the thread.
 */
export class Pacer {
  #since = performance.now();

  constructor(private readonly restPerBusy: number) {}

  /** Rests in proportion to the time since the last rest (a step shorter than a timer tick only yields). */
  async rest(): Promise<void> {
    const rest = (performance.now() - this.#since) * this.restPerBusy;
    if (rest >= 1) await new Promise<void>((resolve) => setTimeout(resolve, rest));
    else await new Promise<void>((resolve) => setImmediate(resolve));
    this.#since = performance.now();
  }
}
