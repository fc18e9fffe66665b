/**
 * The archive-moving side of `sundeck backup`: a download streamed to a temp file next to the destination (hashed with
 * sha256 on the way, renamed into place once complete, removed on failure), following the server's redirect to a
 * presigned S3 URL without sending the API key there; an upload-restore sent as multipart. Nothing here holds an
 * archive in memory beyond one chunk.
 */
import { createHash } from "node:crypto";
import { createWriteStream, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Api } from "../client/api";
import { ClientError } from "../client/errors";
import type { BackupRun } from "../shared/backups";
import { CliError } from "./errors";

/** The server's body limit of upload-restore. */
export const UPLOAD_LIMIT_BYTES = 32 * 2 ** 20;

/** What a download wrote. */
export interface Downloaded {
  path: string;
  bytes: number;
  sha256: string;
}

/** The file name a response proposes (content-disposition), or `fallback`; never a path. */
export function fileNameOf(res: Response, fallback: string): string {
  const cd = res.headers.get("content-disposition") ?? "";
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
  const name = m ? basename(decodeURIComponent(m[1]).replace(/\\/g, "/")) : "";
  return name && name !== "." && name !== ".." ? name : fallback;
}

/** The archive's response: the server's, or the presigned URL's it redirects to (asked without the API key). */
export async function openDownload(api: Api, runId: number): Promise<Response> {
  const res = await api.open("GET", `/backups/runs/${runId}/download`);
  if (res.status < 300 || res.status >= 400) return res;
  const location = new URL(res.headers.get("location") ?? "", api.target.url).toString();
  await res.body?.cancel();
  let s3: Response;
  try {
    s3 = await fetch(location, { redirect: "follow" });
  } catch (e) {
    throw new CliError(`cannot fetch the archive from its storage (${new URL(location).host}): ${(e as Error).message}`);
  }
  if (!s3.ok) {
    await s3.body?.cancel();
    throw new CliError(`the archive's storage (${new URL(location).host}) answered ${s3.status} ${s3.statusText}`.trim());
  }
  return s3;
}

/**
 * Stream `res`'s body to `dest` (written as a temp file in the same directory, renamed when complete) or to stdout
 * when `dest` is "-"; sha256 and size are computed as the bytes pass.
 */
export async function saveBody(res: Response, dest: string, onBytes?: (n: number) => void): Promise<Downloaded> {
  if (!res.body) throw new CliError("the server sent no archive");
  const hash = createHash("sha256");
  let bytes = 0;
  const toStdout = dest === "-";
  const tmp = toStdout ? "" : join(dirname(dest), `.${basename(dest)}.${process.pid}.part`);
  const out = toStdout ? process.stdout : createWriteStream(tmp, { mode: 0o600 });
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      hash.update(chunk);
      bytes += chunk.byteLength;
      onBytes?.(bytes);
      // wait for the drain: a slow disk or pipe holds the download back instead of filling memory
      if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", resolve));
    }
    if (!toStdout) {
      await new Promise<void>((resolve, reject) =>
        (out as ReturnType<typeof createWriteStream>).end((e?: Error | null) => (e ? reject(e) : resolve())),
      );
      renameSync(tmp, dest);
    }
  } catch (e) {
    if (!toStdout) {
      (out as ReturnType<typeof createWriteStream>).destroy();
      rmSync(tmp, { force: true });
    }
    throw e instanceof ClientError || e instanceof CliError
      ? e
      : new CliError(`download cut off after ${bytes} bytes: ${(e as Error).message}`);
  }
  return { path: dest, bytes, sha256: hash.digest("hex") };
}

/** Send a file for upload-restore; resolves with the restore's id. The file is checked against the limit first. */
export async function uploadRestore(
  api: Api,
  slug: string,
  file: string,
  strategy: string,
  container: string | undefined,
): Promise<{ restore_id: number }> {
  let size: number;
  try {
    size = statSync(file).size;
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (size > UPLOAD_LIMIT_BYTES) throw new CliError(`${file} is ${size} bytes: upload-restore takes at most 32 MiB`);
  const form = new FormData();
  form.append("file", Bun.file(file), basename(file));
  form.append("strategy", strategy);
  if (container) form.append("container", container);
  const res = await api.open("POST", `/apps/${encodeURIComponent(slug)}/backups/upload-restore`, {
    body: form,
    headers: { accept: "application/json" },
  });
  return (await res.json()) as { restore_id: number };
}

/**
 * The recorded run `id`: from `slug`'s runs when given, else from every app's, then from Sundeck's own state runs
 * (super-admins only; the API has no route for one run). Null when nothing the key can read lists it.
 */
export async function findRun(api: Api, id: number, slug?: string): Promise<BackupRun | null> {
  const slugs = slug ? [slug] : (await api.get<Array<{ slug: string }>>("/apps")).map((a) => a.slug);
  for (const s of slugs) {
    const runs = await api.maybe<BackupRun[]>("GET", `/apps/${encodeURIComponent(s)}/backups/runs?limit=500`);
    const r = runs?.find((x) => x.id === id);
    if (r) return r;
  }
  if (slug) return null;
  // another role is refused here: then the run is simply not found
  const state = await api.maybe<BackupRun[]>("GET", "/system/backups/runs?limit=500").catch((e) => {
    if (e instanceof ClientError) return null;
    throw e;
  });
  return state?.find((x) => x.id === id) ?? null;
}
