/**
 * The best `capacity` documents seen so far, ordered like Anserini's sort: score descending, then
 * asin ascending (given as each document's rank in asin order). A min-heap whose root is the
 * weakest kept hit.
 */
export class TopHitsHeap {
  private readonly docs: Int32Array;
  private readonly scores: Float64Array;
  size = 0;

  constructor(
    readonly capacity: number,
    private readonly asinRank: Int32Array,
  ) {
    this.docs = new Int32Array(capacity);
    this.scores = new Float64Array(capacity);
  }

  get full(): boolean {
    return this.size === this.capacity;
  }

  /** Score of the weakest kept hit once full; -Infinity before. */
  get threshold(): number {
    return this.full && this.capacity > 0 ? (this.scores[0] as number) : Number.NEGATIVE_INFINITY;
  }

  private weaker(scoreA: number, docA: number, scoreB: number, docB: number): boolean {
    if (scoreA !== scoreB) return scoreA < scoreB;
    return (this.asinRank[docA] as number) > (this.asinRank[docB] as number);
  }

  /** Keeps the document if it beats the weakest kept hit (or there is room). */
  offer(doc: number, score: number): void {
    if (this.size < this.capacity) {
      this.siftUp(doc, score);
      return;
    }
    if (
      this.capacity === 0 ||
      this.weaker(score, doc, this.scores[0] as number, this.docs[0] as number)
    )
      return;
    this.siftDownFromRoot(doc, score);
  }

  private siftUp(doc: number, score: number): void {
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const parentDoc = this.docs[parent] as number;
      const parentScore = this.scores[parent] as number;
      if (!this.weaker(score, doc, parentScore, parentDoc)) break;
      this.docs[i] = parentDoc;
      this.scores[i] = parentScore;
      i = parent;
    }
    this.docs[i] = doc;
    this.scores[i] = score;
  }

  private siftDownFromRoot(doc: number, score: number): void {
    let i = 0;
    while (true) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      let child = left;
      if (
        right < this.size &&
        this.weaker(
          this.scores[right] as number,
          this.docs[right] as number,
          this.scores[left] as number,
          this.docs[left] as number,
        )
      ) {
        child = right;
      }
      const childDoc = this.docs[child] as number;
      const childScore = this.scores[child] as number;
      if (!this.weaker(childScore, childDoc, score, doc)) break;
      this.docs[i] = childDoc;
      this.scores[i] = childScore;
      i = child;
    }
    this.docs[i] = doc;
    this.scores[i] = score;
  }

  /** Kept hits, best first. */
  drain(): Array<{ doc: number; score: number }> {
    const out: Array<{ doc: number; score: number }> = [];
    for (let i = 0; i < this.size; i++)
      out.push({ doc: this.docs[i] as number, score: this.scores[i] as number });
    out.sort((x, y) =>
      x.score !== y.score
        ? y.score - x.score
        : (this.asinRank[x.doc] as number) - (this.asinRank[y.doc] as number),
    );
    return out;
  }
}
