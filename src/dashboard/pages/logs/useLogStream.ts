/** The live process log: the reconnecting stream feeding a LogBuffer, re-rendered at most once per frame. */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../../api";
import { perFrame } from "../../hooks";
import { openStream, type StreamStatus, wsUrl } from "../../ws";
import { LogBuffer, type LogLine } from "./buffer";

export const STREAM_PATH = "/api/system/process-logs/stream";

export interface LogStream {
  lines: LogLine[];
  status: StreamStatus;
  /** Lines received in total (for "N new lines" while paused). */
  received: number;
}

/** Subscribe while mounted. */
export function useLogStream(): LogStream {
  const buf = useRef(new LogBuffer());
  const [status, setStatus] = useState<StreamStatus>({ state: "connecting" });
  const [, setTick] = useState(0);
  const received = useRef(0);

  useEffect(() => {
    const frames = perFrame(() => setTick((t) => t + 1));
    const add = (line: string) => {
      if (buf.current.push(line)) {
        received.current++;
        frames.schedule();
      }
    };
    let snapshotTried = false;
    const stream = openStream({
      url: wsUrl(STREAM_PATH),
      onFrame: (f) => add(typeof f === "string" ? f : JSON.stringify(f)),
      onStatus: (s, reconnect) => {
        setStatus(s);
        if (s.state === "open" && reconnect) buf.current.resync();
        // the socket cannot connect at all: show the buffer through REST meanwhile
        if (s.state === "waiting" && buf.current.lines.length === 0 && !snapshotTried) {
          snapshotTried = true;
          api.processLogs().then(
            (lines) => {
              buf.current.resync();
              for (const l of lines) add(l);
              buf.current.resync();
            },
            () => {},
          );
        }
      },
    });
    return () => {
      stream.close();
      frames.cancel();
    };
  }, []);

  return { lines: buf.current.lines, status, received: received.current };
}
