/**
 * The lowest row this session may still write a line for (the floor): every row below it that started has
 * ended, so its line, if it has one, is in the journal. The spool is told it with each write of results
 * (src/output/spool/spool.ts `release`) and writes the rows below it at once, in row order, instead of holding
 * each parsed line back behind thousands of later ones (docs/decisions/spool-row-floor.md).
 *
 * Rows start in read order, which is row order for a file or a database input; the rows in flight are kept in
 * that order in a ring, and the floor moves over the ended ones at its front. A row that starts below one started
 * before (a job's chunks come in any order) turns the floor off for the session: 0, nothing known.
 */
export class RowFloor {
  #rows = new Float64Array(256);
  #ended = new Uint8Array(256);
  /** Tickets: the n-th row started has ticket n; its slot is n & #mask. */
  #head = 0;
  #tail = 0;
  #mask = 255;
  /** The last row started (-1: none yet). */
  #last = -1;
  #off = false;

  /** A row starts; its ticket is handed back to `end`. */
  start(row: number): number {
    if (row <= this.#last) this.#off = true;
    this.#last = row;
    if (this.#tail - this.#head > this.#mask) this.#grow();
    const t = this.#tail++;
    this.#rows[t & this.#mask] = row;
    this.#ended[t & this.#mask] = 0;
    return t;
  }

  /** The row of `ticket` has ended (its line written, or none to write). */
  end(ticket: number): void {
    this.#ended[ticket & this.#mask] = 1;
    while (this.#head < this.#tail && this.#ended[this.#head & this.#mask] === 1) this.#head += 1;
  }

  /** Every row below it that this session started has ended; 0 when nothing is known. */
  get floor(): number {
    if (this.#off) return 0;
    return this.#head < this.#tail ? this.#rows[this.#head & this.#mask] : this.#last + 1;
  }

  /** More rows in flight than slots: twice the slots, each ticket in its place under the new mask. */
  #grow(): void {
    const size = (this.#mask + 1) * 2;
    const rows = new Float64Array(size);
    const ended = new Uint8Array(size);
    for (let t = this.#head; t < this.#tail; t += 1) {
      rows[t & (size - 1)] = this.#rows[t & this.#mask];
      ended[t & (size - 1)] = this.#ended[t & this.#mask];
    }
    this.#rows = rows;
    this.#ended = ended;
    this.#mask = size - 1;
  }
}
