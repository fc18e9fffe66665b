/**
 * A compose file from the remote meets exactly the checks of an API deploy: each hostile file is refused with its
 * rule and service, the API refuses the same file with the same message, and nothing is deployed.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkRemoteCompose } from "../../../src/modules/gitsync/files/compose-check";
import { startDockerServer } from "../../helpers/apps";
import type { TestServer } from "../../helpers/server";

let s: TestServer;
beforeAll(async () => {
  s = await startDockerServer();
});
afterAll(() => s?.stop());

const svc = (extra: string) => `services:\n  web:\n    image: sundeck-test/web:latest\n${extra}`;

const HOSTILE: Array<[string, string, string, string, string | null]> = [
  ["privileged", svc("    privileged: true\n"), "", "privileged", "web"],
  ["privileged through the remote's .env", svc(`    privileged: \${PRIV}\n`), "PRIV=true\n", "privileged", "web"],
  ["the host's root bind-mounted", svc("    volumes:\n      - /:/host\n"), "", "bind-mount", "web"],
  ["a bind mount through the remote's .env", svc(`    volumes:\n      - \${DIR}:/x\n`), "DIR=/etc\n", "bind-mount", "web"],
  ["host networking", svc("    network_mode: host\n"), "", "network-mode", "web"],
  ["an added capability", svc("    cap_add: [SYS_ADMIN]\n"), "", "cap-add", "web"],
  ["a host device", svc("    devices: [/dev/sda]\n"), "", "devices", "web"],
  ["an unknown registry label", svc("    labels:\n      sundeck.registries: nowhere\n"), "", "registries", null],
  ["a YAML tag", "services: !!binary x\n", "", "yaml", null],
];

describe("checkRemoteCompose", () => {
  it("accepts a file an API deploy accepts", () => {
    expect(checkRemoteCompose(s.ctx, "web-ok", svc("    ports: ['127.0.0.1:18080:8080']\n"), "")).toEqual({ ok: true });
  });

  it.each(HOSTILE)("refuses %s as an API deploy does", async (_n, compose, env, rule, service) => {
    const slug = "hostile";
    const v = checkRemoteCompose(s.ctx, slug, compose, env);
    expect(v).toMatchObject({ ok: false, rule, service });
    if (v.ok) return;
    const envMap = Object.fromEntries(
      env
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((l) => l.split("=")),
    );
    const api = await s.root.post("/api/apps/deploy", { slug, compose, env: envMap });
    expect(api.status).toBe(400);
    expect(api.text).toBe(`Bad Request: ${v.message}`);
    expect(existsSync(join(s.ctx.config.apps_dir, slug))).toBe(false);
    expect(s.ctx.appRepo.bySlug(slug)).toBeUndefined();
  });

  it("refuses a directory name that is not a slug", () => {
    expect(checkRemoteCompose(s.ctx, "Bad_Name", svc(""), "")).toMatchObject({ ok: false, rule: "invalid" });
  });
});
