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
