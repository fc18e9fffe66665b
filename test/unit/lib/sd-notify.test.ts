/** sd_notify through libc: the datagram reaches a unix socket bound at a path or an abstract name, as systemd's does. */
import { afterEach, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { sdNotify } from "../../../src/lib/sd-notify";
import { until } from "../../helpers/http";
import { tempDir } from "../../helpers/tmp";

/** systemd's side: a unix datagram socket printing what it receives (newlines as |). */
const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
name = sys.argv[1]
s.bind("\\0" + name[1:] if name.startswith("@") else name)
print("bound", flush=True)
while True:
    print(s.recv(4096).decode().replace("\\n", "|"), flush=True)
`;

let stop: (() => void) | undefined;
afterEach(() => stop?.());

async function receiver(address: string): Promise<string[]> {
  const p = Bun.spawn(["python3", "-c", RECEIVER, address], { stdout: "pipe", stderr: "inherit" });
  stop = () => p.kill();
  const lines: string[] = [];
  void (async () => {
    for await (const chunk of p.stdout) lines.push(...new TextDecoder().decode(chunk).split("\n").filter(Boolean));
  })();
  await until(() => lines.includes("bound"), { what: "the receiver to bind" });
  return lines;
}

describe("sdNotify", () => {
  it("sends the state to a socket at a path", async () => {
    const path = join(tempDir(), "notify");
    const got = await receiver(path);
    expect(await sdNotify("READY=1\nSTATUS=serving", { NOTIFY_SOCKET: path })).toBe(true);
    await until(() => got.includes("READY=1|STATUS=serving"), { what: "the datagram" });
  });

  it("sends to an abstract socket named with a leading @", async () => {
    const name = `@sundeck-test-${process.pid}-${Date.now()}`;
    const got = await receiver(name);
    expect(await sdNotify("STOPPING=1", { NOTIFY_SOCKET: name })).toBe(true);
    await until(() => got.includes("STOPPING=1"), { what: "the datagram" });
  });

  it("does nothing outside systemd, and refuses an address that is not a unix socket", async () => {
    expect(await sdNotify("READY=1", {})).toBe(false);
    await expect(sdNotify("READY=1", { NOTIFY_SOCKET: "vsock:2:1234" })).rejects.toThrow("not a unix socket");
  });

  it("fails when nobody listens, so a service manager that asked is never left waiting silently", async () => {
    await expect(sdNotify("READY=1", { NOTIFY_SOCKET: join(tempDir(), "nobody") })).rejects.toThrow("sendto");
  });
});
