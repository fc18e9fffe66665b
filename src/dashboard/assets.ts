/**
 * The dashboard's files. In the compiled binary they are the HTML import's prebuilt files; from source they are
 * bundled once in memory on first request. Either way they are served by Elysia, so they carry our headers.
 */
import { basename } from "node:path";
import page from "./index.html";

export interface Asset {
  body: Blob;
  type: string;
  etag: string;
  /** Content-hashed names never change: cache them for a year. */
  immutable: boolean;
}

export interface Assets {
  index: Asset;
  files: Map<string, Asset>;
}

let loading: Promise<Assets> | undefined;

/** The dashboard's files, keyed by URL path. */
export function dashboardAssets(): Promise<Assets> {
  loading ??= load().catch((e) => {
    loading = undefined;
    throw e;
  });
  return loading;
}

async function load(): Promise<Assets> {
  const bundle = page as unknown as {
    index: string;
    files?: Array<{ path: string; loader: string; headers: Record<string, string> }>;
  };
  const files = new Map<string, Asset>();
  let index: Asset | undefined;
  if (bundle.files?.length) {
    for (const f of bundle.files) {
      const asset = {
        body: Bun.file(f.path),
        type: f.headers["content-type"],
        etag: `"${f.headers.etag}"`,
        immutable: f.loader !== "html",
      };
      if (f.loader === "html") index = asset;
      else files.set(`/${basename(f.path)}`, asset);
    }
  } else {
    const out = await Bun.build({ entrypoints: [bundle.index], target: "browser", minify: true, publicPath: "/" });
    if (!out.success) throw new Error(`dashboard build failed: ${out.logs.map((l) => l.message).join("; ")}`);
    for (const a of out.outputs) {
      const body = new Blob([await a.arrayBuffer()], { type: a.type });
      const asset = {
        body,
        type: a.type,
        etag: `"${a.hash ?? Bun.hash(await body.arrayBuffer()).toString(36)}"`,
        immutable: a.kind !== "entry-point" || !a.path.endsWith(".html"),
      };
      if (a.path.endsWith(".html")) index = { ...asset, immutable: false };
      else files.set(`/${basename(a.path)}`, asset);
    }
  }
  if (!index) throw new Error("dashboard build has no index.html");
  return { index, files };
}
