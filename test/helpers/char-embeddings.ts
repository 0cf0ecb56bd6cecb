import { Embeddings, type EmbeddingsParams } from "@langchain/core/embeddings";

/**
 * A deterministic, offline embedding model for store tests and benches: a text's vector counts
 * its characters (code unit modulo `dims`), normalised to length 1, so texts sharing characters are
 * close. Real `Embeddings`, so the store calls it exactly as it would call a hosted model; it also
 * counts the texts it embedded.
 */
export class CharacterEmbeddings extends Embeddings {
  readonly dims: number;
  /** Texts given to `embedDocuments`, in order. */
  readonly documents: string[] = [];
  /** Texts given to `embedQuery`, in order. */
  readonly queries: string[] = [];

  constructor(params: EmbeddingsParams & { dims?: number } = {}) {
    super(params);
    this.dims = params.dims ?? 64;
  }

  async embedDocuments(texts: string[]): Promise<number[][]> {
    this.documents.push(...texts);
    return texts.map((text) => this.vector(text));
  }

  async embedQuery(text: string): Promise<number[]> {
    this.queries.push(text);
    return this.vector(text);
  }

  private vector(text: string): number[] {
    const counts = new Array<number>(this.dims).fill(0);
    for (let i = 0; i < text.length; i += 1) counts[text.charCodeAt(i) % this.dims]! += 1;
    const norm = Math.sqrt(counts.reduce((sum, value) => sum + value * value, 0));
    return norm === 0 ? counts : counts.map((value) => value / norm);
  }
}
