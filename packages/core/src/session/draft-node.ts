import type { Json, JsonObject, PathSegment } from "../domain/json.js";
import type { DraftTracker } from "./draft.js";

export type Container = JsonObject | Json[];

/**
 * One container node reached through a draft, and the proxy handler of its
 * view: one object per node, so a tracker allocates no closures and needs no
 * lookup from proxy target to node. Nodes are copied when first reached (copy
 * on access), so the proxy target is always the draft's own mutable copy and
 * the committed value, frozen and shared, is never touched. Children remember
 * their key so ops carry the current path even after array splices move them.
 */
export class DraftNode implements ProxyHandler<Container> {
  /** Children reached so far; created with the first one (most nodes of a small write have none). */
  children: Map<PathSegment, DraftNode> | undefined = undefined;
  readonly proxy: Container;
  /** Removed from the tree (spliced out, overwritten) or replaced with the whole value. */
  detached = false;

  constructor(
    readonly tracker: DraftTracker,
    readonly copy: Container,
    readonly parent: DraftNode | undefined,
    public key: PathSegment,
  ) {
    this.proxy = new Proxy(copy, this);
  }

  get(target: Container, prop: string | symbol): unknown {
    return this.tracker.read(this, target, prop);
  }

  set(target: Container, prop: string | symbol, value: unknown): boolean {
    return this.tracker.write(this, target, prop, value);
  }

  deleteProperty(target: Container, prop: string | symbol): boolean {
    return this.tracker.deleteKey(this, target, prop);
  }

  defineProperty(): boolean {
    this.tracker.checkLive(this);
    throw new TypeError(`${this.tracker.at(this)}: define properties on a draft by assignment`);
  }

  getOwnPropertyDescriptor(
    target: Container,
    prop: string | symbol,
  ): PropertyDescriptor | undefined {
    return this.tracker.describeKey(this, target, prop);
  }

  has(target: Container, prop: string | symbol): boolean {
    this.tracker.checkLive();
    return Reflect.has(target, prop);
  }

  ownKeys(target: Container): (string | symbol)[] {
    this.tracker.checkLive();
    return Reflect.ownKeys(target);
  }

  setPrototypeOf(): boolean {
    throw new TypeError(`${this.tracker.at(this)}: a draft keeps its prototype`);
  }

  preventExtensions(): boolean {
    throw new TypeError(`${this.tracker.at(this)}: a draft cannot be frozen or sealed`);
  }

  /**
   * Freezes this node's copy and every copy below it. They are the only
   * unfrozen containers of the final value: everything else in it is the
   * frozen base or a frozen copy of an assigned value, so no walk is needed.
   */
  freeze(): Container {
    if (this.children) for (const child of this.children.values()) child.freeze();
    Object.freeze(this.copy);
    return this.copy;
  }

  /** Marks this node and everything reached below it as no longer part of the draft. */
  detach(): void {
    this.detached = true;
    if (this.children) for (const child of this.children.values()) child.detach();
  }

  /** Detaches the child at `key`, if one was reached. */
  detachChild(key: PathSegment): void {
    const child = this.children?.get(key);
    if (child) {
      child.detach();
      this.children?.delete(key);
    }
  }
}
