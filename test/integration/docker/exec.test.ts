/**
 * Exec and archive calls of the Engine API against the real engine: stdout demultiplexed from stderr, stdin streamed
 * in with backpressure and EOF, exit codes, a command that stops reading early, a broken input, missing containers,
 * and tar streams out of and into a container.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { FrameSplitter } from "../../../src/docker/exec";
import { type Engine, EngineError } from "../../../src/docker/types";
import { dockerOk, ensureTestImages, removeByLabel, requireDocker, TEST_IMAGES, uniqueName } from "../../helpers/docker";

const NAME = uniqueName("sdt-exec");
const LABEL = `io.sundeck.test=${NAME}`;
let engine: Engine;
let id: string;

beforeAll(async () => {
  engine = await requireDocker();
  await ensureTestImages();
  id = await dockerOk("run", "-d", "--label", LABEL, TEST_IMAGES.busybox, "sleep", "100000");
});

afterAll(async () => {
  await removeByLabel(LABEL);
});

/** A stream of `n` chunks of 1 MiB of `byte`, made as it is read. */
function mebibytes(n: number, byte = 97): ReadableStream<Uint8Array> {
  let left = n;
  return new ReadableStream({
    pull(c) {
      if (left-- <= 0) return c.close();
      c.enqueue(new Uint8Array(1 << 20).fill(byte));
    },
  });
}

describe("exec", () => {
  it("streams stdout apart from stderr and reports the exit code", async () => {
    const p = await engine.exec(id, {
      cmd: ["sh", "-c", "echo to-err >&2; head -c 20000000 /dev/zero | tr '\\0' x; echo; exit 3"],
    });
    let bytes = 0;
    let chunks = 0;
    for await (const c of p.stdout) {
      bytes += c.length;
      chunks++;
    }
    expect(bytes).toBe(20_000_001);
    expect(chunks).toBeGreaterThan(1);
    expect(await p.result).toEqual({ exitCode: 3, stderr: "to-err\n" });
  });

  it("passes environment without putting it in argv", async () => {
    const p = await engine.exec(id, { cmd: ["sh", "-c", 'printf %s "$SECRET"'], env: ["SECRET=hush"] });
    expect(await new Response(p.stdout).text()).toBe("hush");
  });

  it("streams stdin in and closes it at the end", async () => {
    const p = await engine.exec(id, { cmd: ["sh", "-c", "cat | wc -c"], stdin: mebibytes(64) });
    expect((await new Response(p.stdout).text()).trim()).toBe(String(64 << 20));
    expect((await p.result).exitCode).toBe(0);
  });

  it("ends with the command's exit and stderr when it stops reading stdin early", async () => {
    const p = await engine.exec(id, {
      cmd: ["sh", "-c", "head -c 10 >/dev/null; echo refused >&2; exit 4"],
      stdin: mebibytes(1000),
    });
    await new Response(p.stdout).arrayBuffer();
    expect(await p.result).toEqual({ exitCode: 4, stderr: "refused\n" });
  });

  it("fails when the input stream fails, so a truncated input is never taken for a whole one", async () => {
    const broken = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(10));
        c.error(new Error("input broke"));
      },
    });
    const p = await engine.exec(id, { cmd: ["sh", "-c", "cat >/dev/null; echo whole"], stdin: broken });
    expect(await new Response(p.stdout).text().catch((e) => e.message)).toBe("input broke");
    expect(await p.result.catch((e) => e.message)).toBe("input broke");
  });

  it("keeps only the tail of a long stderr", async () => {
    const p = await engine.exec(id, {
      cmd: ["sh", "-c", "head -c 300000 /dev/zero | tr '\\0' e >&2; echo END >&2"],
      stderrCap: 1000,
    });
    await new Response(p.stdout).arrayBuffer();
    const { stderr } = await p.result;
    expect(stderr.length).toBe(1000);
    expect(stderr.endsWith("eEND\n")).toBe(true);
  });

  it("answers 404 for a missing container and 126 for a missing command", async () => {
    const err = await engine.exec("sundeck-no-such-container", { cmd: ["true"] }).catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.status).toBe(404);
    const p = await engine.exec(id, { cmd: ["no-such-command"] });
    await new Response(p.stdout).arrayBuffer();
    expect((await p.result).exitCode).toBe(126);
  });

  it("stops on abort", async () => {
    const abort = new AbortController();
    const p = await engine.exec(id, { cmd: ["sh", "-c", "while :; do echo tick; sleep 0.05; done"], signal: abort.signal });
    const reader = p.stdout.getReader();
    await reader.read();
    abort.abort();
    const err = await (async () => {
      for (;;) if ((await reader.read()).done) return null;
    })().catch((e) => e);
    expect(err?.name).toBe("AbortError");
  });
});

describe("archive", () => {
  it("reads a path as a tar stream and writes a tar stream into a directory", async () => {
    await dockerOk("exec", id, "sh", "-c", "mkdir -p /src/sub && echo hello > /src/sub/a.txt");
    const tar = await engine.getArchive(id, "/src");
    await dockerOk("exec", id, "mkdir", "-p", "/dst");
    await engine.putArchive(id, "/dst", tar);
    expect(await dockerOk("exec", id, "cat", "/dst/src/sub/a.txt")).toBe("hello");
  });

  it("answers 404 for a missing path", async () => {
    const err = await engine.getArchive(id, "/no/such/path").catch((e) => e);
    expect(err).toBeInstanceOf(EngineError);
    expect(err.status).toBe(404);
    const put = await engine.putArchive(id, "/no/such/dir", new Response(new Uint8Array(1024)).body!).catch((e) => e);
    expect(put).toBeInstanceOf(EngineError);
  });
});

describe("frame splitter", () => {
  it("splits frames cut anywhere, headers included", () => {
    const frame = (kind: number, text: string) => {
      const body = new TextEncoder().encode(text);
      const h = new Uint8Array(8);
      h[0] = kind;
      new DataView(h.buffer).setUint32(4, body.length);
      return [...h, ...body];
    };
    const all = new Uint8Array([...frame(1, "out-1 "), ...frame(2, "err"), ...frame(1, "out-2")]);
    for (let cut = 1; cut < all.length; cut++) {
      const got = { 1: "", 2: "" } as Record<number, string>;
      const s = new FrameSplitter((k, p) => (got[k] += new TextDecoder().decode(p)));
      s.push(all.subarray(0, cut));
      s.push(all.subarray(cut));
      expect(got).toEqual({ 1: "out-1 out-2", 2: "err" });
    }
  });
});
