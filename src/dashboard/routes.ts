/** Serves the embedded dashboard: its files, and index.html for every other non-API path (client routing). */
import { Elysia } from "elysia";
import { notFound } from "../lib/errors";
import { type Asset, dashboardAssets } from "./assets";

function serve(asset: Asset, request: Request): Response {
  const headers: Record<string, string> = {
    "content-type": asset.type,
    etag: asset.etag,
    "cache-control": asset.immutable ? "public, max-age=31536000, immutable" : "no-cache",
  };
  if (request.headers.get("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
  return new Response(asset.body, { headers });
}

/** The dashboard plugin; register it last so API routes win. */
export function dashboardRoutes() {
  return new Elysia({ name: "dashboard" }).get("/*", async ({ request, path }) => {
    if (path === "/api" || path.startsWith("/api/")) throw notFound();
    const assets = await dashboardAssets();
    const file = assets.files.get(path);
    // a missing file is a 404; any other path is a dashboard page
    if (!file && /\.[A-Za-z0-9]+$/.test(path)) throw notFound();
    return serve(file ?? assets.index, request);
  });
}
