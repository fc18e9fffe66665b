/**
 * A real (if minimal) Docker Registry v2 for tests: Basic auth, one image exported with `docker save`, served as a
 * schema-2 manifest, its config and its gzipped layers. The Docker engine pulls from it on 127.0.0.1, which it treats
 * as an insecure registry by default.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const sha = (b: Uint8Array) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

export interface TestRegistry {
  host: string;
  /** Full reference of the served image, e.g. `127.0.0.1:5123/private/web:1`. */
  image: string;
  /** Requests that carried no or wrong credentials. */
  refused: number;
  /** Authenticated manifest requests (GET or HEAD: the engine skips the GET when it has the content already). */
  pulls: number;
  stop(): void;
}

/** Serve `source` (a local image) as `<repo>:<tag>` behind user/password. */
export async function startRegistry(opts: {
  source: string;
  repo: string;
  tag: string;
  username: string;
  password: string;
}): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), "sundeck-registry-"));
  try {
    const save = Bun.spawnSync(["docker", "save", opts.source], { stdout: "pipe" });
    if (save.exitCode !== 0) throw new Error(`docker save ${opts.source} failed`);
    Bun.spawnSync(["tar", "x", "-C", dir], { stdin: save.stdout });
    const [meta] = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as Array<{ Config: string; Layers: string[] }>;
    const config = new Uint8Array(readFileSync(join(dir, meta.Config)));
    const blobs = new Map<string, Uint8Array>([[sha(config), config]]);
    const layers = meta.Layers.map((l) => {
      const gz = Bun.gzipSync(new Uint8Array(readFileSync(join(dir, l))));
      blobs.set(sha(gz), gz);
      return { mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip", size: gz.byteLength, digest: sha(gz) };
    });
    const manifest = new TextEncoder().encode(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.docker.distribution.manifest.v2+json",
        config: { mediaType: "application/vnd.docker.container.image.v1+json", size: config.byteLength, digest: sha(config) },
        layers,
      }),
    );
    const expected = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString("base64")}`;
    const state = { refused: 0, pulls: 0 };
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        if (req.headers.get("authorization") !== expected) {
          state.refused++;
          return new Response(JSON.stringify({ errors: [{ code: "UNAUTHORIZED", message: "authentication required" }] }), {
            status: 401,
            headers: { "www-authenticate": 'Basic realm="sundeck-test"', "content-type": "application/json" },
          });
        }
        const base = { "docker-distribution-api-version": "registry/2.0" };
        if (url.pathname === "/v2/") return new Response("{}", { headers: { ...base, "content-type": "application/json" } });
        if (
          url.pathname === `/v2/${opts.repo}/manifests/${opts.tag}` ||
          url.pathname === `/v2/${opts.repo}/manifests/${sha(manifest)}`
        ) {
          state.pulls++;
          return new Response(req.method === "HEAD" ? null : (manifest as unknown as BodyInit), {
            headers: {
              ...base,
              "content-type": "application/vnd.docker.distribution.manifest.v2+json",
              "docker-content-digest": sha(manifest),
              "content-length": String(manifest.byteLength),
            },
          });
        }
        const m = /^\/v2\/(.+)\/blobs\/(sha256:[0-9a-f]{64})$/.exec(url.pathname);
        const blob = m && m[1] === opts.repo ? blobs.get(m[2]) : undefined;
        if (blob)
          return new Response(req.method === "HEAD" ? null : (blob as unknown as BodyInit), {
            headers: { ...base, "docker-content-digest": m![2], "content-length": String(blob.byteLength) },
          });
        return new Response(JSON.stringify({ errors: [{ code: "NAME_UNKNOWN" }] }), { status: 404, headers: base });
      },
    });
    const host = `127.0.0.1:${server.port}`;
    return {
      host,
      image: `${host}/${opts.repo}:${opts.tag}`,
      get refused() {
        return state.refused;
      },
      get pulls() {
        return state.pulls;
      },
      stop: () => server.stop(true),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
