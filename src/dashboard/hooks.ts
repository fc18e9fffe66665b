/** Small shared hooks: loading a resource, and running a form action with busy and error state. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface Resource<T> {
  data: T | undefined;
  error: string | null;
  loading: boolean;
  /** Load again (after a change). */
  reload(): Promise<void>;
  /** Replace the data locally. */
  set(v: T): void;
}

/** Load `fn()` now and whenever `deps` change; the latest call wins. */
export function useResource<T>(fn: () => Promise<T>, deps: unknown[] = []): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const n = ++seq.current;
    setLoading(true);
    try {
      const v = await fn();
      if (n !== seq.current) return;
      setData(v);
      setError(null);
    } catch (e) {
      if (n !== seq.current) return;
      setError((e as Error).message);
    } finally {
      if (n === seq.current) setLoading(false);
    }
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, set: setData };
}

export interface Action<A extends unknown[]> {
  busy: boolean;
  error: string | null;
  run(...args: A): Promise<boolean>;
  clear(): void;
}

/** Wrap an async action: `busy` while it runs, `error` holds the server's message when it fails. */
export function useAction<A extends unknown[]>(fn: (...args: A) => Promise<unknown>): Action<A> {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );
  const run = async (...args: A) => {
    setBusy(true);
    setError(null);
    try {
      await fn(...args);
      return true;
    } catch (e) {
      if (alive.current) setError((e as Error).message);
      return false;
    } finally {
      if (alive.current) setBusy(false);
    }
  };
  return { busy, error, run, clear: () => setError(null) };
}

/**
 * Call `fn` every `ms` while the page is visible: the next call is scheduled when the previous one settled, nothing
 * runs while the tab is hidden, and a call runs at once when it shows again.
 */
export function useVisibleInterval(fn: () => unknown, ms: number): void {
  const latest = useRef(fn);
  latest.current = fn;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let running = false;
    let stopped = false;
    const visible = () => document.visibilityState === "visible";
    const schedule = () => {
      if (!stopped && timer === null && visible()) timer = setTimeout(tick, ms);
    };
    const tick = async () => {
      timer = null;
      if (stopped || running || !visible()) return;
      running = true;
      try {
        await latest.current();
      } catch {
        // the caller shows its own errors; polling goes on
      } finally {
        running = false;
        schedule();
      }
    };
    const onVisibility = () => {
      if (!visible()) {
        if (timer !== null) clearTimeout(timer);
        timer = null;
      } else if (timer === null && !running) void tick();
    };
    document.addEventListener("visibilitychange", onVisibility);
    schedule();
    return () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [ms]);
}

/** `useResource`, loaded again every `ms` while the page is visible (live views). */
export function usePolled<T>(fn: () => Promise<T>, ms: number, deps: unknown[] = []): Resource<T> {
  const r = useResource(fn, deps);
  useVisibleInterval(r.reload, ms);
  return r;
}

/**
 * Coalesce calls into at most one `fn` per animation frame: `schedule()` asks for one, `cancel()` drops a pending one
 * (call it on cleanup).
 */
export function perFrame(fn: () => void): { schedule(): void; cancel(): void } {
  let frame = 0;
  return {
    schedule() {
      if (frame) return;
      frame = requestAnimationFrame(() => {
        frame = 0;
        fn();
      });
    },
    cancel() {
      if (frame) cancelAnimationFrame(frame);
      frame = 0;
    },
  };
}
