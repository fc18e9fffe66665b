/**
 * sd_notify for Bun: tell systemd (Type=notify) that the service is ready, stopping, or what it is doing. Bun has no
 * unix datagram sockets, so the datagram goes out through libc (bun:ffi: socket, sendto) from the main process
 * itself, which lets the unit keep NotifyAccess=main (`systemd-notify` from a child would need NotifyAccess=all, and
 * races its own exit). Outside systemd (no NOTIFY_SOCKET) every call does nothing.
 */
import { existsSync } from "node:fs";

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
/** sockaddr_un: sa_family_t (2 bytes) then a 108-byte path. */
const SUN_PATH_MAX = 108;

/** Candidate libc files: glibc's soname, then musl's (the dynamic loader is its libc). */
function libcPaths(): string[] {
  const arch = process.arch === "arm64" ? "aarch64" : "x86_64";
  return ["libc.so.6", `/lib/ld-musl-${arch}.so.1`, `/lib/libc.musl-${arch}.so.1`];
}

/** The socket address for NOTIFY_SOCKET: a path, or an abstract name when it starts with "@". */
export function sockaddrUn(socket: string): Uint8Array {
  const name = new TextEncoder().encode(socket.startsWith("@") ? `\0${socket.slice(1)}` : socket);
  if (name.length >= SUN_PATH_MAX) throw new Error("NOTIFY_SOCKET path is too long");
  const addr = new Uint8Array(2 + name.length + (socket.startsWith("@") ? 0 : 1));
  new DataView(addr.buffer).setUint16(0, AF_UNIX, true);
  addr.set(name, 2);
  return addr;
}

/** Send one datagram through libc; false when libc or bun:ffi is not usable here, throws when the send fails. */
async function sendWithLibc(socket: string, message: string): Promise<boolean> {
  let ffi: typeof import("bun:ffi");
  try {
    ffi = await import("bun:ffi");
  } catch {
    return false;
  }
  for (const path of libcPaths()) {
    if (path.startsWith("/") && !existsSync(path)) continue;
    let lib: ReturnType<typeof openLibc>;
    try {
      lib = openLibc(ffi, path);
    } catch {
      continue;
    }
    try {
      const fd = lib.symbols.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw new Error("socket(AF_UNIX, SOCK_DGRAM) failed");
      try {
        const addr = sockaddrUn(socket);
        const body = new TextEncoder().encode(message);
        const sent = lib.symbols.sendto(fd, ffi.ptr(body), body.length, 0, ffi.ptr(addr), addr.length);
        if (Number(sent) !== body.length) throw new Error(`sendto to ${socket} failed`);
      } finally {
        lib.symbols.close(fd);
      }
      return true;
    } finally {
      lib.close();
    }
  }
  return false;
}

function openLibc(ffi: typeof import("bun:ffi"), path: string) {
  const { FFIType } = ffi;
  return ffi.dlopen(path, {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    sendto: {
      args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32],
      returns: FFIType.i64,
    },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
}

/**
 * Send `state` (newline-separated assignments, like "READY=1\nSTATUS=serving") to the service manager. Returns false
 * when not running under a notify-type service; throws when the manager asked for it and it could not be told.
 */
export async function sdNotify(state: string, env: Record<string, string | undefined> = process.env): Promise<boolean> {
  const socket = env.NOTIFY_SOCKET;
  if (!socket) return false;
  if (!(socket.startsWith("/") || socket.startsWith("@"))) throw new Error(`NOTIFY_SOCKET ${socket} is not a unix socket`);
  if (await sendWithLibc(socket, state)) return true;
  throw new Error("cannot notify systemd: libc could not be loaded (use Type=simple in the unit)");
}
