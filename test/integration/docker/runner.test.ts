/** The command runner against real processes: streaming, cancellation of a whole process group, env isolation. */
import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRunner, LineSplitter } from "../../../src/docker/runner";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

const runner = createRunner();
const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", LANG: "C.UTF-8" };

/** Gone, or a zombie waiting for init to reap it: either way no longer running. */
function dead(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

describe("command runner", () => {
  it("delivers a line while the process is still running", async () => {
    const flag = join(tempDir(), "go");
    const lines: string[] = [];
    let sawWhileRunning = false;
    const script = `echo ready; while [ ! -f "${flag}" ]; do sleep 0.02; done; echo finished`;
    const result = await runner.run(["sh", "-c", script], {
      env: ENV,
      onLine: (line) => {
        lines.push(line);
        if (line === "ready") {
          // the process cannot finish before the flag exists, so this line arrived while it ran
          sawWhileRunning = !existsSync(flag);
          writeFileSync(flag, "");
        }
      },
    });
    expect(sawWhileRunning).toBe(true);
    expect(lines).toEqual(["ready", "finished"]);
    expect(result).toEqual({ code: 0, output: "ready\nfinished", killed: false });
  });

  it("tags stdout and stderr, flushes the last partial line and handles carriage returns", async () => {
    const seen: Array<[string, string]> = [];
    const script = "printf 'one\\r\\ntwo\\n\\nprog 1\\rprog 2\\rdone\\n'; echo oops >&2; printf 'tail'";
    const r = await runner.run(["sh", "-c", script], { env: ENV, onLine: (l, s) => seen.push([s, l]) });
    expect(r.code).toBe(0);
    expect(seen.filter(([s]) => s === "stdout").map(([, l]) => l)).toEqual([
      "one",
      "two",
      "",
      "prog 1",
      "prog 2",
      "done",
      "tail",
    ]);
    expect(seen.filter(([s]) => s === "stderr")).toEqual([["stderr", "oops"]]);
  });

  it("keeps only the last 64 KiB of output", async () => {
    let count = 0;
    const r = await runner.run(["sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line-$i; i=$((i+1)); done"], {
      env: ENV,
      onLine: () => count++,
    });
    expect(count).toBe(20000);
    expect(r.output.length).toBeLessThanOrEqual(64 * 1024);
    expect(r.output.endsWith("line-19999")).toBe(true);
    expect(r.output.startsWith("line-0\n")).toBe(false);
  });

  it("reports the exit code", async () => {
    const r = await runner.run(["sh", "-c", "echo bye; exit 3"], { env: ENV });
    expect(r).toEqual({ code: 3, output: "bye", killed: false });
  });

  it("cancelling kills the whole process group, grandchildren included", async () => {
    const ctl = new AbortController();
    const pids: Record<string, number> = {};
    // one grandchild dies on TERM, the other ignores it and needs the KILL that follows
    const script = ["sleep 1000 & echo soft $!", `sh -c 'trap "" TERM; echo hard $$; exec sleep 1000' &`, "wait"].join("\n");
    const t0 = Date.now();
    const run = runner.run(["sh", "-c", script], {
      env: ENV,
      signal: ctl.signal,
      onLine: (line) => {
        const [name, pid] = line.split(" ");
        pids[name] = Number(pid);
        started.push(Number(pid));
        if (pids.soft && pids.hard) ctl.abort();
      },
    });
    const r = await run;
    expect(r.killed).toBe(true);
    expect(r.code).not.toBe(0);
    await until(() => dead(pids.soft), { timeout: 2000, what: "the TERM-able grandchild to die" });
    await until(() => dead(pids.hard), { timeout: 8000, what: "the TERM-ignoring grandchild to be killed" });
    expect(Date.now() - t0).toBeLessThan(9000);
  });

  it("a timeout kills the process and says so", async () => {
    const t0 = Date.now();
    const r = await runner.run(["sh", "-c", "echo started; exec sleep 30"], { env: ENV, timeoutMs: 200 });
    expect(r.killed).toBe(true);
    expect(r.code).toBe(143);
    expect(r.output).toContain("started");
    expect(r.output).toContain("timed out after 200ms");
    expect(Date.now() - t0).toBeLessThan(3000);
  });

  it("an already aborted signal runs nothing", async () => {
    const flag = join(tempDir(), "ran");
    const r = await runner.run(["sh", "-c", `touch ${flag}`], { env: ENV, signal: AbortSignal.abort() });
    expect(r.killed).toBe(true);
    expect(existsSync(flag)).toBe(false);
  });

  it("gives the child only the environment it was given", async () => {
    process.env.SUNDECK_RUNNER_SECRET = "do-not-leak";
    try {
      const explicit = await runner.run(["sh", "-c", 'echo "[$SUNDECK_RUNNER_SECRET][$ONLY_HERE]"'], {
        env: { ...ENV, ONLY_HERE: "yes" },
      });
      expect(explicit.output).toBe("[][yes]");
      const byDefault = await runner.run(["sh", "-c", "env"]);
      const keys = byDefault.output.split("\n").map((l) => l.split("=")[0]);
      expect(keys).not.toContain("SUNDECK_RUNNER_SECRET");
      expect(keys.filter((k) => k !== "PWD" && k !== "SHLVL" && k !== "_").sort()).toEqual(["HOME", "LANG", "PATH"]);
    } finally {
      delete process.env.SUNDECK_RUNNER_SECRET;
    }
  });

  it("runs in the given directory and writes stdin", async () => {
    const dir = tempDir();
    const r = await runner.run(["sh", "-c", "pwd; cat"], { env: ENV, cwd: dir, stdin: "from stdin\n" });
    expect(r.output).toBe(`${dir}\nfrom stdin`);
  });

  it("a missing executable gives 127 and a clear line instead of throwing", async () => {
    const lines: string[] = [];
    const r = await runner.run(["sundeck-no-such-binary", "x"], { env: ENV, onLine: (l) => lines.push(l) });
    expect(r).toEqual({ code: 127, output: "sundeck-no-such-binary: command not found", killed: false });
    expect(lines).toEqual(["sundeck-no-such-binary: command not found"]);
    const noPath = await runner.run(["docker", "version"], { env: { PATH: "/nonexistent" } });
    expect(noPath.code).toBe(127);
  });
});

describe("line splitter", () => {
  it("joins lines split across chunks, including a \\r\\n split in two and multi-byte characters", () => {
    const out: string[] = [];
    const s = new LineSplitter((l) => out.push(l));
    const bytes = new TextEncoder().encode("héllo wörld\r\nsecond\r");
    for (const b of bytes) s.push(new Uint8Array([b]));
    s.push(new TextEncoder().encode("\nthird\x1b[32m green\x1b[0m"));
    s.end();
    expect(out).toEqual(["héllo wörld", "second", "third green"]);
  });
});
