/** A cursor over LevelDB's little-endian varints and length-prefixed slices; reading past the end throws `RangeError`. */
export class ByteReader {
  constructor(
    readonly bytes: Uint8Array,
    public pos = 0,
    readonly end = bytes.length,
  ) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  byte(): number {
    if (this.pos >= this.end) throw new RangeError(`read past the end at byte ${this.pos}`);
    return this.bytes[this.pos++] as number;
  }

  /** A varint of up to 64 bits, as a number (file offsets and sizes stay far below 2^53). */
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    throw new RangeError(`varint longer than 10 bytes at byte ${this.pos}`);
  }

  slice(length: number): Uint8Array {
    if (length < 0 || this.pos + length > this.end)
      throw new RangeError(`a ${length}-byte field runs past the end at byte ${this.pos}`);
    const out = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** A varint length followed by that many bytes. */
  prefixed(): Uint8Array {
    return this.slice(this.varint());
  }
}
