// The slice of Node's `events` that abstract-level uses. browser-level expects a bundler to provide
// `events`; esbuild does not polyfill Node built-ins, so the test bundle aliases it to this file.
type Listener = (...args: unknown[]) => void;

export class EventEmitter {
  private listeners = new Map<string | symbol, Listener[]>();

  on(name: string | symbol, listener: Listener): this {
    if (this.listeners.has("newListener") && name !== "newListener")
      this.emit("newListener", name, listener);
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), listener]);
    return this;
  }

  addListener(name: string | symbol, listener: Listener): this {
    return this.on(name, listener);
  }

  once(name: string | symbol, listener: Listener): this {
    const wrapper: Listener = (...args) => {
      this.removeListener(name, wrapper);
      listener(...args);
    };
    return this.on(name, wrapper);
  }

  removeListener(name: string | symbol, listener: Listener): this {
    const list = this.listeners.get(name) ?? [];
    const i = list.indexOf(listener);
    if (i >= 0) {
      this.listeners.set(name, [...list.slice(0, i), ...list.slice(i + 1)]);
      if (this.listeners.has("removeListener")) this.emit("removeListener", name, listener);
    }
    return this;
  }

  off(name: string | symbol, listener: Listener): this {
    return this.removeListener(name, listener);
  }

  emit(name: string | symbol, ...args: unknown[]): boolean {
    const list = this.listeners.get(name);
    if (!list || list.length === 0) return false;
    for (const listener of list) listener.apply(this, args);
    return true;
  }

  listenerCount(name: string | symbol): number {
    return this.listeners.get(name)?.length ?? 0;
  }
}

export default { EventEmitter };
