/**
 * systemd's side of sd_notify for tests: a unix datagram socket (python3, since Bun has none) that collects each
 * message it receives, with newlines shown as `|`.
 */
import { until } from "../../helpers/http";

const RECEIVER = `
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
while True:
    print(s.recv(4096).decode().replace("\\n", "|"), flush=True)
`;

export interface NotifyReceiver {
  /** Messages so far, oldest first. */
  lines: string[];
  stop(): Promise<void>;
}

/** Bind `sock` and collect what is sent to it; resolves once it is bound. */
export async function notifyReceiver(sock: string): Promise<NotifyReceiver> {
  const listener = Bun.spawn(["python3", "-c", RECEIVER, sock], { stdout: "pipe", stderr: "inherit" });
  const lines: string[] = [];
  const reader = (async () => {
    for await (const chunk of listener.stdout) lines.push(...new TextDecoder().decode(chunk).split("\n").filter(Boolean));
  })();
  await until(() => lines.includes("bound"), { what: "the notify socket" });
  lines.splice(lines.indexOf("bound"), 1);
  return {
    lines,
    stop: async () => {
      listener.kill();
      await reader;
    },
  };
}
