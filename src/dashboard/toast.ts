/** Short confirmations ("User alice created") shown in one polite live region, gone after a few seconds. */
import { useEffect, useState } from "preact/hooks";

export interface Toast {
  id: number;
  text: string;
  kind: "ok" | "error";
}

const TOAST_MS = 4000;
let toasts: Toast[] = [];
let next = 1;
const listeners = new Set<(t: Toast[]) => void>();

const emit = () => {
  for (const fn of listeners) fn(toasts);
};

/** Show a message. */
export function toast(text: string, kind: Toast["kind"] = "ok"): void {
  const t = { id: next++, text, kind };
  toasts = [...toasts.slice(-1), t];
  emit();
  setTimeout(() => dismiss(t.id), TOAST_MS);
}

/** Remove a message now. */
export function dismiss(id: number): void {
  toasts = toasts.filter((t) => t.id !== id);
  emit();
}

/** The current messages. */
export function useToasts(): Toast[] {
  const [list, setList] = useState(toasts);
  useEffect(() => {
    listeners.add(setList);
    return () => {
      listeners.delete(setList);
    };
  }, []);
  return list;
}
