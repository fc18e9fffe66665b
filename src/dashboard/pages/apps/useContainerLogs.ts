/** Live container logs of one service: the reconnecting stream feeding a buffer, re-rendered at most once per frame. */
import { useEffect, useRef, useState } from "preact/hooks";
import { appStreams, type LogsQuery } from "../../api";
import { perFrame } from "../../hooks";
import type { ContainerLogFrame } from "../../types";
import { openStream, type StreamStatus, wsUrl } from "../../ws";
import { type ContainerLine, ContainerLogBuffer } from "./logbuffer";

export interface ContainerLogs {
  lines: ContainerLine[];
  status: StreamStatus;
  /** The server's error frame (no container for the service...). */
  error: string | null;
  /** Lines received in total. */
  received: number;
  /** Connect again after the stream ended. */
  reconnect(): void;
}

/** Subscribe while mounted; a new query (or `reconnect`) starts over. */
export function useContainerLogs(slug: string, q: LogsQuery): ContainerLogs {
  const buf = useRef(new ContainerLogBuffer());
  const [status, setStatus] = useState<StreamStatus>({ state: "connecting" });
  const [error, setError] = useState<string | null>(null);
  const [generation, setGeneration] = useState(0);
  const [, setTick] = useState(0);
  const received = useRef(0);
  const key = `${slug}|${q.service}|${q.tail}|${q.follow}|${q.since ?? ""}`;
  const shownKey = useRef("");

  useEffect(() => {
    // a new query starts over; connecting again to the same one keeps the lines and skips the repeated history
    if (shownKey.current !== key) {
      buf.current.clear();
      received.current = 0;
      setTick((t) => t + 1);
    } else buf.current.resync();
    shownKey.current = key;
    setError(null);
    const frames = perFrame(() => setTick((t) => t + 1));
    const stream = openStream({
      url: wsUrl(appStreams.logs(slug, q)),
      onFrame: (f) => {
        const fr = f as ContainerLogFrame;
        if (typeof fr?.error === "string") {
          setError(fr.error);
          return;
        }
        if (buf.current.push(fr)) {
          received.current++;
          frames.schedule();
        }
      },
      onStatus: (s, again) => {
        setStatus(s);
        if (s.state === "open" && again) buf.current.resync();
        if (s.state === "open") setError(null);
      },
    });
    return () => {
      stream.close();
      frames.cancel();
    };
  }, [key, generation]);

  return {
    lines: buf.current.lines,
    status,
    error,
    received: received.current,
    reconnect: () => setGeneration((g) => g + 1),
  };
}
