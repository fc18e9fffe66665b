/**
 * Validation of an S3 target's settings, once at the edge: an http(s) endpoint, a bucket name S3 accepts, a region
 * (us-east-1 when empty), a prefix of key segments ending in `/`, both credentials. Messages never carry the secret.
 *
 * The endpoint's addresses follow the alert webhooks' address policy with private destinations allowed (a MinIO on
 * the LAN or on localhost is a common setup): private, loopback, CGNAT and unique-local pass; link-local (cloud
 * metadata), unspecified, multicast, reserved and the other special blocks never do. An IP literal is judged here;
 * a name is resolved and judged before every request by {@link checkEndpointAddresses}.
 */
import { badRequest } from "../../../lib/errors";
import { checkAddress, literalHost } from "../../webhooks/address-policy";
import { type Resolver, systemResolver } from "../../webhooks/safe-http";
import { checkKey, TargetError } from "./keys";

/** The settings of an S3-compatible target (camelCase; the wire's `access_key` etc. map one to one). */
export interface S3TargetConfig {
  /** `http(s)://host[:port]`, no path, query or fragment. */
  endpoint: string;
  bucket: string;
  /** Key prefix: `""` or segments ending in `/` (e.g. `sundeck/`). */
  prefix: string;
  region: string;
  accessKey: string;
  secretKey: string;
  /** Path-style addressing (`endpoint/bucket/key`, most self-hosted servers); false: `bucket.endpoint/key`. */
  pathStyle: boolean;
}

/** Bucket names S3 accepts: 3-63 of lower-case letters, digits, dots and hyphens, a letter or digit at each end. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z0-9-]{1,64}$/;

/**
 * Check and normalise S3 settings (400 naming the field otherwise). The prefix loses leading slashes and gains a
 * trailing one; an empty region becomes `us-east-1`; `pathStyle` defaults to true.
 */
export function parseS3Config(input: Partial<S3TargetConfig>): S3TargetConfig {
  const endpoint = String(input.endpoint ?? "").trim();
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw badRequest("s3 endpoint must be an http(s) URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw badRequest("s3 endpoint must be an http(s) URL");
  if (url.username || url.password) throw badRequest("s3 endpoint must not carry credentials");
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash)
    throw badRequest("s3 endpoint must be scheme, host and port only (the bucket goes in bucket)");
  if (url.port !== "" && Number(url.port) === 0) throw badRequest("s3 endpoint must name a port from 1 to 65535");
  const literal = literalHost(url);
  const verdict = literal === null ? null : checkAddress(literal, { allowPrivate: true });
  if (verdict && !verdict.ok) throw badRequest(`s3 endpoint address ${verdict.address} is refused (${verdict.reason})`);
  const bucket = String(input.bucket ?? "");
  if (!BUCKET.test(bucket) || bucket.includes("..") || /^\d+\.\d+\.\d+\.\d+$/.test(bucket))
    throw badRequest(
      "s3 bucket must be 3-63 lower-case letters, digits, dots or hyphens, starting and ending with a letter or digit",
    );
  const region = String(input.region ?? "").trim() || "us-east-1";
  if (!REGION.test(region)) throw badRequest("s3 region must be lower-case letters, digits and hyphens");
  const prefix = normalisePrefix(String(input.prefix ?? ""));
  const accessKey = String(input.accessKey ?? "");
  const secretKey = String(input.secretKey ?? "");
  if (!accessKey.trim() || /\s/.test(accessKey)) throw badRequest("s3 access_key is required");
  if (!secretKey) throw badRequest("s3 secret_key is required");
  return { endpoint: url.origin, bucket, prefix, region, accessKey, secretKey, pathStyle: input.pathStyle ?? true };
}

/** `""`, or the prefix without leading slashes and with one trailing slash; each segment a valid key segment. */
export function normalisePrefix(raw: string): string {
  const p = raw.trim().replace(/^\/+/, "").replace(/\/+$/, "");
  if (!p) return "";
  try {
    checkKey(p);
  } catch {
    throw badRequest("s3 prefix must be segments of letters, digits, '.', '_' or '-' separated by '/'");
  }
  return `${p}/`;
}

/** The origin requests go to: the endpoint, or `<bucket>.<host>` in virtual-hosted style. */
export function s3Origin(c: Pick<S3TargetConfig, "endpoint" | "bucket" | "pathStyle">): string {
  if (c.pathStyle) return c.endpoint;
  const url = new URL(c.endpoint);
  url.hostname = `${c.bucket}.${url.hostname}`;
  return url.origin;
}

/** How long the endpoint's name may take to resolve. */
const RESOLVE_MS = 10_000;

/**
 * Judge the addresses `origin`'s host resolves to now (every one must pass; names under `localhost` are loopback).
 * Throws a {@link TargetError} naming the address and why it is refused, or that the name does not resolve.
 */
export async function checkEndpointAddresses(origin: string, resolve: Resolver = systemResolver): Promise<void> {
  const url = new URL(origin);
  const host = url.hostname.replace(/\.$/, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return;
  const literal = literalHost(url);
  let found: string[];
  if (literal !== null) found = [literal];
  else {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("timed out")), RESOLVE_MS);
    });
    try {
      found = await Promise.race([resolve(host), late]);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      throw new TargetError(`cannot resolve ${host}: ${(err.code ?? err.message ?? "error").toLowerCase()}`, "Resolve");
    } finally {
      clearTimeout(timer);
    }
    if (found.length === 0) throw new TargetError(`cannot resolve ${host}: no addresses`, "Resolve");
  }
  for (const ip of found) {
    const v = checkAddress(ip, { allowPrivate: true });
    if (!v.ok)
      throw new TargetError(`s3 endpoint ${host} resolves to ${v.address}, which is refused (${v.reason})`, "AddressRefused");
  }
}
