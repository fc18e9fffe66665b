/** SNI and ALPN are read from real ClientHellos (openssl, Bun), and truncated or foreign input never throws. */
import { afterAll, describe, expect, it } from "bun:test";
import { createServer, type Server } from "node:net";
import { helloRecordLength, parseClientHello } from "../../../src/proxy/listeners-hello";

// a TCP server that keeps the first bytes each client sends (a real ClientHello) and hangs up
const captured: Buffer[] = [];
const server: Server = createServer((s) => {
  let buf = Buffer.alloc(0);
  s.on("data", (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    const need = helloRecordLength(buf);
    if (need === 0 || buf.length >= need) {
      captured.push(buf);
      s.destroy();
    }
  });
  s.on("error", () => {});
});
const port = await new Promise<number>((r) =>
  server.listen(0, "127.0.0.1", () => r((server.address() as { port: number }).port)),
);
afterAll(() => server.close());

async function opensslHello(args: string[]): Promise<Buffer> {
  const before = captured.length;
  const p = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, ...args], {
    stdin: new TextEncoder().encode(""),
    stdout: "ignore",
    stderr: "ignore",
  });
  await p.exited;
  expect(captured.length).toBe(before + 1);
  return captured[before];
}

describe("ClientHello parsing", () => {
  it("reads SNI and ALPN from a validator-like hello (openssl)", async () => {
    const hello = await opensslHello(["-servername", "Chal.Example.com", "-alpn", "acme-tls/1"]);
    expect(helloRecordLength(hello)).toBe(hello.length);
    expect(parseClientHello(hello)).toEqual({ sni: "chal.example.com", alpn: ["acme-tls/1"] });
  });

  it("reads a browser-like hello with several protocols, and one without SNI", async () => {
    const hello = await opensslHello(["-servername", "www.example.com", "-alpn", "h2,http/1.1"]);
    expect(parseClientHello(hello)).toEqual({ sni: "www.example.com", alpn: ["h2", "http/1.1"] });
    const bare = await opensslHello(["-noservername"]);
    expect(parseClientHello(bare)).toEqual({ sni: null, alpn: [] });
  });

  it("reads the hello of Bun's own TLS client", async () => {
    const before = captured.length;
    await fetch(`https://127.0.0.1:${port}/`, { tls: { serverName: "bun.example.com" } } as RequestInit).catch(() => {});
    expect(parseClientHello(captured[before])?.sni).toBe("bun.example.com");
  });

  it("never throws on truncated or foreign input", async () => {
    const hello = await opensslHello(["-servername", "cut.example.com", "-alpn", "acme-tls/1"]);
    for (let n = 0; n < hello.length; n += 7) expect(() => parseClientHello(hello.subarray(0, n))).not.toThrow();
    expect(helloRecordLength(Buffer.from("GET / HTTP/1.1\r\n"))).toBe(0);
    expect(parseClientHello(Buffer.from("GET / HTTP/1.1\r\n\r\n"))).toBeNull();
    expect(helloRecordLength(hello.subarray(0, 3))).toBe(5);
  });
});
