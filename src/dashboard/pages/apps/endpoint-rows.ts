/**
 * The Endpoints editor's pure side: rows from the app's endpoints (one per host), the browser's checks of each field,
 * and the body of `PUT /api/apps/{slug}/endpoints` (one entry per host). The server reads the labels it writes again
 * and is the judge; these checks only catch what is cheap and certain before anything is sent.
 */
import type { EndpointEdit } from "../../../shared/apps";
import type { AppEndpoint, AppView, TlsMode } from "../../types";

/** The TLS choice of a row: a mode, or "" for the server's (no `sundeck.tls` label). */
export type TlsChoice = TlsMode | "";

/** One row of the editor: one host of one service; `port` as typed. */
export interface EndpointRow {
  id: number;
  service: string;
  domain: string;
  port: string;
  path: string;
  tls: TlsChoice;
}

/** Problems of one row, by field. */
export type RowProblems = Partial<Record<"service" | "domain" | "port" | "path", string>>;

/** The TLS choices in the order the editor offers them. */
export const TLS_CHOICES: readonly TlsChoice[] = ["", "auto", "custom", "local", "off"];

const LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

let rowIds = 0;

/** The services a row can target: the app's, then any only an endpoint names. */
export function serviceNames(app: Pick<AppView, "services" | "endpoints">): string[] {
  return [...new Set([...app.services.map((s) => s.name), ...app.endpoints.map((e) => e.service)])];
}

/** The port a new row of `service` starts with: its endpoint's, else the target of its first published port, else "". */
export function defaultPort(app: Pick<AppView, "services" | "endpoints">, service: string): string {
  const ep = app.endpoints.find((e) => e.service === service);
  if (ep) return String(ep.port);
  const spec = app.services.find((s) => s.name === service)?.ports[0];
  // `host-ip:published:target/protocol`
  const target = spec ? /:(\d+)(\/\w+)?$/.exec(spec)?.[1] : undefined;
  return target ?? "";
}

/** Rows of the app's endpoints, one per host, in the order the app lists them. */
export function rowsOf(endpoints: AppEndpoint[]): EndpointRow[] {
  return endpoints.flatMap((ep) =>
    ep.hosts.map((domain) => ({
      id: ++rowIds,
      service: ep.service,
      domain,
      port: String(ep.port),
      path: ep.path === "/" ? "" : ep.path,
      tls: ep.tls ?? "",
    })),
  );
}

/** A new row for the first service (or `service`), with its default port. */
export function newRow(app: Pick<AppView, "services" | "endpoints">, service = serviceNames(app)[0] ?? ""): EndpointRow {
  return { id: ++rowIds, service, domain: "", port: defaultPort(app, service), path: "", tls: "" };
}

/** The row with another service; a port left empty or at the old service's default follows the new one's. */
export function withService(app: Pick<AppView, "services" | "endpoints">, row: EndpointRow, service: string): EndpointRow {
  const keep = row.port.trim() !== "" && row.port.trim() !== defaultPort(app, row.service);
  return { ...row, service, port: keep ? row.port : defaultPort(app, service) };
}

const hostOf = (domain: string) => domain.trim().toLowerCase();
const pathOf = (path: string) => {
  const p = path.trim();
  return p === "" || p === "/" ? "/" : p.replace(/\/$/, "");
};

/** Why `domain` is not a host name the proxy can route (a DNS name, optionally `*.` first), or null. */
export function hostProblem(domain: string): string | null {
  const h = hostOf(domain);
  if (h === "") return "Enter a host name";
  if (h.includes("://")) return "Enter the host name only, without http:// or https://";
  if (h.includes("/")) return "Enter the host name only; a path goes in the Path field";
  if (h.includes(":")) return "Enter the host name only; the port is the container's, in the Port field";
  if (h.includes(",")) return "One host name per row: add a row for each";
  const labels = h.startsWith("*.") ? h.slice(2).split(".") : h.split(".");
  if (h.length > 253 || !labels.every((l) => LABEL.test(l))) {
    return `"${h.slice(0, 80)}" is not a valid host name (letters, digits, dashes and dots; *. first for a wildcard)`;
  }
  return null;
}

/** Why `port` is not a container port in 1-65535, or null. */
export function portProblem(port: string): string | null {
  const p = port.trim();
  if (p === "") return "Enter the container port";
  const n = /^\d{1,5}$/.test(p) ? Number(p) : Number.NaN;
  return n >= 1 && n <= 65535 ? null : "Enter a port from 1 to 65535";
}

/** Why `path` is not a path prefix, or null; empty means the whole host (`/`). */
export function pathProblem(path: string): string | null {
  const p = path.trim();
  if (p === "") return null;
  if (!p.startsWith("/")) return "A path starts with /";
  if (/[\s?#\\]/.test(p) || p.includes("//") || p.split("/").some((s) => s === ".." || s === ".")) {
    return "A path prefix has no spaces, ?, #, \\, // or . and .. segments";
  }
  return null;
}

/** Problems of the rows (bad fields, a service the app does not have, a host and path listed twice), by row id. */
export function rowProblems(rows: EndpointRow[], services: string[]): Map<number, RowProblems> {
  const out = new Map<number, RowProblems>();
  const seen = new Set<string>();
  for (const r of rows) {
    const p: RowProblems = {};
    if (!services.includes(r.service)) p.service = "Choose one of the app's services";
    const host = hostProblem(r.domain);
    if (host) p.domain = host;
    const port = portProblem(r.port);
    if (port) p.port = port;
    const path = pathProblem(r.path);
    if (path) p.path = path;
    if (!host && !path) {
      const key = `${hostOf(r.domain)}${pathOf(r.path)}`;
      if (seen.has(key)) p.domain = `${key} is listed twice`;
      seen.add(key);
    }
    if (Object.keys(p).length > 0) out.set(r.id, p);
  }
  return out;
}

/** The PUT body: one entry per row; the path left out for the whole host, TLS for the server's mode. */
export function bodyOf(rows: EndpointRow[]): EndpointEdit[] {
  return rows.map((r) => {
    const e: EndpointEdit = { service: r.service, domain: hostOf(r.domain), port: Number(r.port.trim()) };
    if (pathOf(r.path) !== "/") e.path = pathOf(r.path);
    if (r.tls !== "") e.tls = r.tls;
    return e;
  });
}

/** Whether the rows say something other than `endpoints` (order aside). */
export function changed(rows: EndpointRow[], endpoints: AppEndpoint[]): boolean {
  const key = (list: EndpointEdit[]) => list.map((e) => JSON.stringify(e)).sort();
  const a = key(bodyOf(rows));
  const b = key(bodyOf(rowsOf(endpoints)));
  return a.length !== b.length || a.some((x, i) => x !== b[i]);
}
