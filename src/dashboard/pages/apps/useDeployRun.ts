/**
 * One deploy or action followed from the browser. The deploy-logs socket is opened BEFORE the request that starts the
 * work (the server keeps no output once a deploy has ended), its frames are collected, and after the single done
 * frame the outcome is read back through REST: status, error, and an automatic rollback that followed a failure.
 * `watch` follows whatever is in flight without starting anything (a deploy started elsewhere).
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { api, appStreams } from "../../api";
import type { Accepted, DeployFrame, DeployRecord } from "../../types";
import { openStream, type StreamStatus, wsUrl } from "../../ws";

/** One line of output. */
export interface RunLine {
  n: number;
  timestamp: string;
  action: string;
  output: string;
  /** The done frame's summary. */
  final?: boolean;
}

/** How a run ended. */
export interface RunResult {
  status: DeployRecord["status"] | "unknown";
  error: string | null;
  /** The automatic rollback to the last good version that followed a failed deploy. */
  rolledBack: { version: number | null; status: string; error: string | null } | null;
}

export type RunPhase = "idle" | "starting" | "running" | "finishing" | "done" | "refused";

export interface RunState {
  phase: RunPhase;
  slug: string;
  label: string;
  lines: RunLine[];
  deployId: number | null;
  result: RunResult | null;
  /** The server's reason when the request was refused (nothing was started or written). */
  refusal: string | null;
  stream: StreamStatus;
  /** Counts finished runs, so views can reload their data when one ends. */
  finished: number;
}

/** Names of the journal's actions, as the run's label. */
export const ACTION_LABELS: Record<string, string> = {
  deploy: "Deploy",
  rollback: "Rollback",
  start: "Start",
  stop: "Stop",
  restart: "Restart",
  pull: "Pull",
  scale: "Scale",
  remove: "Remove",
};

const FRAME_LABELS: Record<string, string> = { up: "Deploy", pull: "Pull", down: "Stop", restart: "Restart", scale: "Scale" };
/** Wait at most this long for the socket before sending the request anyway. */
const CONNECT_WAIT_MS = 5000;

const IDLE: RunState = {
  phase: "idle",
  slug: "",
  label: "",
  lines: [],
  deployId: null,
  result: null,
  refusal: null,
  stream: { state: "closed", code: 1000 },
  finished: 0,
};

const isFrame = (f: unknown): f is DeployFrame => typeof f === "object" && f !== null && "done" in f && "action" in f;

/** The outcome when the journal cannot tell (the app is gone after a remove): read from the done frame. */
export function resultFromSummary(summary: string): RunResult {
  const failed = /^(deploy )?failed: (.*)$/.exec(summary);
  if (failed) return { status: failed[2] === "cancelled" ? "cancelled" : "failed", error: failed[2], rolledBack: null };
  return { status: summary ? "succeeded" : "unknown", error: null, rolledBack: null };
}

/** The version an automatic rollback went back to, from the output ("rolling back to version 3"). */
export function rollbackVersion(lines: RunLine[]): number | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /rolling back to version (\d+)/.exec(lines[i].output);
    if (m) return Number(m[1]);
  }
  return null;
}

interface Run {
  slug: string;
  mode: "start" | "watch";
  /** The deploy id once the request was accepted (null when the route does not return one). */
  accepted: Promise<number | null>;
  lines: RunLine[];
  seen: boolean;
  onDone?: (r: RunResult) => void;
}

export interface DeployRun {
  state: RunState;
  /** Open the stream, then send `post`; false when the server refused it (the reason is in `state.refusal`). */
  start(slug: string, label: string, post: () => Promise<unknown>, opts?: { onDone?(r: RunResult): void }): Promise<boolean>;
  /** Follow a deploy in flight, if any; nothing changes on screen when none runs. */
  watch(slug: string): void;
  /** Hide the finished run. */
  dismiss(): void;
}

/** The hook. */
export function useDeployRun(): DeployRun {
  const [state, setState] = useState<RunState>(IDLE);
  const current = useRef<Run | null>(null);
  const socket = useRef<{ close(): void } | null>(null);
  const frame = useRef(0);

  const live = (run: Run) => current.current === run;
  const flush = (run: Run) => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (live(run)) setState((s) => ({ ...s, lines: run.lines.slice() }));
    });
  };

  const finalize = async (run: Run, done: DeployFrame) => {
    let deployId: number | null;
    try {
      deployId = await run.accepted;
    } catch {
      return;
    }
    let list: DeployRecord[] = [];
    try {
      list = await api.apps.deploys(run.slug);
    } catch {
      // the app is gone (removed): the done frame tells
    }
    let rec =
      deployId === null
        ? list.find((d) => !(d.action === "rollback" && d.source === "system"))
        : list.find((d) => d.id === deployId);
    if (!rec && deployId !== null) rec = await api.apps.deployRecord(run.slug, deployId).catch(() => undefined);
    let result: RunResult;
    if (rec && rec.status !== "running") {
      const after = list.filter((d) => d.id > rec.id && d.action === "rollback" && d.source === "system");
      const rb = after[after.length - 1];
      result = {
        status: rec.status,
        error: rec.error,
        rolledBack: rb ? { version: rollbackVersion(run.lines), status: rb.status, error: rb.error } : null,
      };
    } else result = resultFromSummary(done.output);
    if (!live(run)) return;
    current.current = null;
    socket.current?.close();
    setState((s) => ({
      ...s,
      phase: "done",
      lines: run.lines.slice(),
      deployId: deployId ?? rec?.id ?? s.deployId,
      result,
      finished: s.finished + 1,
    }));
    run.onDone?.(result);
  };

  const onFrame = (run: Run, f: unknown) => {
    if (!live(run) || !isFrame(f)) return;
    const nothing = f.done && f.action === "none" && f.output === "";
    if (run.mode === "watch" && !run.seen) {
      // nothing in flight: leave the screen as it was
      if (nothing) {
        socket.current?.close();
        current.current = null;
        return;
      }
      run.seen = true;
      setState((s) => ({
        ...IDLE,
        phase: "running",
        slug: run.slug,
        label: FRAME_LABELS[f.action] ?? "Deploy",
        stream: s.stream,
        finished: s.finished,
      }));
      // the journal names the operation and its id
      api.apps.deploys(run.slug).then(
        (list) => {
          const rec = list.find((d) => d.status === "running");
          if (rec && live(run)) setState((s) => ({ ...s, label: ACTION_LABELS[rec.action] ?? s.label, deployId: rec.id }));
          run.accepted = Promise.resolve(rec?.id ?? null);
        },
        () => {},
      );
    }
    run.seen = true;
    if (!nothing)
      run.lines.push({ n: run.lines.length + 1, timestamp: f.timestamp, action: f.action, output: f.output, final: f.done });
    if (f.done) {
      setState((s) => ({ ...s, phase: "finishing", lines: run.lines.slice() }));
      void finalize(run, f);
    } else {
      setState((s) => (s.phase === "starting" ? { ...s, phase: "running" } : s));
      flush(run);
    }
  };

  const open = (run: Run, onSettled?: () => void) => {
    socket.current?.close();
    socket.current = openStream({
      url: wsUrl(appStreams.deployLogs(run.slug)),
      onFrame: (f) => onFrame(run, f),
      onStatus: (st, reconnect) => {
        if (!live(run)) return;
        if (st.state !== "connecting") onSettled?.();
        // a reconnect replays the deploy's lines so far: start over rather than repeat them
        if (st.state === "open" && reconnect) run.lines = [];
        if (run.mode === "start" || run.seen) setState((s) => ({ ...s, stream: st }));
      },
    });
  };

  const start = useCallback<DeployRun["start"]>(async (slug, label, post, opts) => {
    let accept!: (id: number | null) => void;
    let refuse!: (e: unknown) => void;
    const accepted = new Promise<number | null>((res, rej) => {
      accept = res;
      refuse = rej;
    });
    accepted.catch(() => {});
    const run: Run = { slug, mode: "start", accepted, lines: [], seen: true, onDone: opts?.onDone };
    current.current = run;
    setState((s) => ({ ...IDLE, phase: "starting", slug, label, stream: { state: "connecting" }, finished: s.finished }));
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, CONNECT_WAIT_MS);
      open(run, () => {
        clearTimeout(t);
        resolve();
      });
    });
    if (!live(run)) return false;
    try {
      const r = (await post()) as Accepted | undefined;
      const id = typeof r === "object" && r !== null && typeof r.deploy_id === "number" ? r.deploy_id : null;
      accept(id);
      if (live(run)) setState((s) => ({ ...s, deployId: id, phase: s.phase === "starting" ? "running" : s.phase }));
      return true;
    } catch (e) {
      refuse(e);
      if (live(run)) {
        socket.current?.close();
        socket.current = null;
        current.current = null;
        setState((s) => ({ ...s, phase: "refused", refusal: (e as Error).message }));
      }
      return false;
    }
  }, []);

  const watch = useCallback((slug: string) => {
    const busy = current.current;
    if (busy && busy.slug === slug) return;
    const run: Run = { slug, mode: "watch", accepted: Promise.resolve(null), lines: [], seen: false };
    current.current = run;
    open(run);
  }, []);

  const dismiss = useCallback(() => {
    if (current.current) return;
    setState((s) => ({ ...IDLE, finished: s.finished }));
  }, []);

  useEffect(
    () => () => {
      current.current = null;
      socket.current?.close();
      if (frame.current) cancelAnimationFrame(frame.current);
    },
    [],
  );

  return { state, start, watch, dismiss };
}
