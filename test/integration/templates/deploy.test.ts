/**
 * Templates through the API on a server with the real engine: the catalog's list and one template, a deploy with its
 * variables (secrets generated into the app's .env, never into the compose file, different for every app), routing
 * written as labels (quick test under sslip.io with TLS local, a domain, none), and the refusals: a taken slug names
 * a free one, a missing or bad variable is named, a quick test without a public IP says to set it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseEnvFile } from "../../../src/compose/envfile";
import { startDockerServer } from "../../helpers/apps";
import { runSundeck } from "../../helpers/cli";
import { removeProject } from "../../helpers/docker";
import { until } from "../../helpers/http";
import type { TestServer } from "../../helpers/server";
import { tempDir } from "../../helpers/tmp";

let s: TestServer;
const SLUGS = ["tpl-site", "tpl-gitea", "tpl-gitea-2", "tpl-gitea-3", "tpl-none", "tpl-admin", "tpl-cli"];

const files = (slug: string) => {
  const dir = join(s.ctx.config.apps_dir, slug);
  return {
    compose: readFileSync(join(dir, "docker-compose.yml"), "utf8"),
    env: parseEnvFile(readFileSync(join(dir, ".env"), "utf8")),
  };
};
const deploy = (id: string, body: unknown) => s.root.post(`/api/templates/${id}/deploy`, body);
/** Wait until the deploy ended (the images of the catalog are not on this machine: it may fail at the pull). */
const ended = (slug: string) =>
  until(
    async () => {
      const a = (await s.root.get(`/api/apps/${slug}`)).json;
      return a?.last_deploy && a.last_deploy.status !== "running" ? a : null;
    },
    { timeout: 60_000, what: `${slug}'s deploy to end` },
  );

beforeAll(async () => {
  for (const slug of SLUGS) await removeProject(`sundeck-${slug}`, { volumes: true });
  s = await startDockerServer();
});
afterAll(async () => {
  await s?.stop();
  for (const slug of SLUGS) await removeProject(`sundeck-${slug}`, { volumes: true });
});

describe("the catalog", () => {
  it("lists every template with its variables, and shows one with its compose text", async () => {
    const list = (await s.root.get("/api/templates")).json;
    expect(list.length).toBeGreaterThanOrEqual(40);
    const gitea = list.find((t: any) => t.id === "gitea");
    expect(gitea).toMatchObject({
      name: "Gitea",
      category: "dev tools",
      services: ["web", "db"],
      web: { service: "web", port: 3000 },
    });
    expect(gitea.variables[0]).toMatchObject({ key: "DB_PASSWORD", type: "secret", required: true });
    expect(gitea.compose).toBeUndefined();
    const one = (await s.root.get("/api/templates/gitea")).json;
    expect(one.compose).toContain("image: gitea/gitea:1.22.6");
    expect(one.notes).toContain("installer");
    expect((await s.root.get("/api/templates/nope")).status).toBe(404);
    expect((await s.anon.get("/api/templates")).status).toBe(401);
  });
});

describe("a deploy from a template", () => {
  it("needs public_host to be an IP for a quick test, then routes <slug>.<ip>.sslip.io with TLS local", async () => {
    const r = await deploy("static-site", { slug: "tpl-site", routing: { mode: "quick" } });
    expect(r.status).toBe(400);
    expect(r.text).toContain("a quick test needs public_host to be this server's public IP address");
    expect((await s.root.put("/api/system/public-host", { public_host: "203.0.113.7" })).status).toBe(200);
    const ok = await deploy("static-site", { slug: "tpl-site", routing: { mode: "quick" } });
    expect(ok.status).toBe(202);
    expect(ok.json).toMatchObject({ slug: "tpl-site", deploy_id: expect.any(Number) });
    const { compose } = files("tpl-site");
    expect(compose).toContain("sundeck.domain: tpl-site.203.0.113.7.sslip.io");
    expect(compose).toContain("sundeck.tls: local");
    const app = await ended("tpl-site");
    const catalogVersion = (await s.root.get("/api/templates/static-site")).json.version;
    expect(app.template).toEqual({ id: "static-site", version: catalogVersion });
    expect(app.endpoints).toEqual([
      expect.objectContaining({ service: "web", hosts: ["tpl-site.203.0.113.7.sslip.io"], port: 80, tls: "local" }),
    ]);
  });

  it("generates each secret into the .env, never the compose file, and anew for every app", async () => {
    expect(
      (await deploy("gitea", { slug: "tpl-gitea", routing: { mode: "domain", domain: "git.example.com", tls: "off" } })).status,
    ).toBe(202);
    const a = files("tpl-gitea");
    expect(a.env.DB_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(a.compose).not.toContain(a.env.DB_PASSWORD);
    expect(a.compose).toContain("POSTGRES_PASSWORD: $" + "{DB_PASSWORD}");
    expect(a.compose).toContain("sundeck.domain: git.example.com");
    // the slug is taken: the refusal names a free one
    const taken = await deploy("gitea", { slug: "tpl-gitea" });
    expect(taken.status).toBe(409);
    expect(taken.text).toBe('Conflict: app "tpl-gitea" exists; "tpl-gitea-2" is free');
    expect((await deploy("gitea", { slug: "tpl-gitea-2", routing: { mode: "none" } })).status).toBe(202);
    const b = files("tpl-gitea-2");
    expect(b.env.DB_PASSWORD).not.toBe(a.env.DB_PASSWORD);
    expect(b.compose).not.toContain("sundeck.domain");
    // a password of the user's is kept as given
    expect((await deploy("gitea", { slug: "tpl-gitea-3", variables: { DB_PASSWORD: "my own password 1" } })).status).toBe(202);
    expect(files("tpl-gitea-3").env.DB_PASSWORD).toBe("my own password 1");
    await ended("tpl-gitea");
  });

  it("names every missing or bad variable, and writes nothing", async () => {
    const r = await deploy("pgadmin", { slug: "tpl-admin", variables: { NOPE: "x" } });
    expect(r.status).toBe(400);
    expect(r.text).toContain("NOPE is not a variable of this template");
    expect(r.text).toContain("ADMIN_EMAIL (Sign-in email) is required");
    const bad = await deploy("pgadmin", {
      slug: "tpl-admin",
      variables: { ADMIN_EMAIL: "not-an-email", ADMIN_PASSWORD: "short" },
    });
    expect(bad.text).toContain("ADMIN_EMAIL must be an email address");
    expect(bad.text).toContain("ADMIN_PASSWORD must be at least 8 characters");
    const mode = await deploy("pgadmin", {
      slug: "tpl-admin",
      variables: { ADMIN_EMAIL: "a@example.com" },
      routing: { mode: "elsewhere" },
    });
    expect(mode.text).toContain("routing.mode must be quick, domain or none");
    const noWeb = await deploy("postgres", { slug: "tpl-admin", routing: { mode: "domain", domain: "db.example.com" } });
    expect(noWeb.status).toBe(400);
    expect(noWeb.text).toContain("template postgres serves no web page to route: deploy it with routing mode none");
    expect((await s.root.get("/api/apps/tpl-admin")).status).toBe(404);
  });
});

describe("sundeck templates", () => {
  const cli = (...args: string[]) =>
    runSundeck(["templates", ...args], { url: s.url, key: s.keyFor("root").key, home: tempDir() });

  it("lists the catalog and shows one template's variables and compose file", async () => {
    const list = await cli("list");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^ID\s+NAME\s+CATEGORY\s+SERVICES\s+DESCRIPTION\n/);
    expect(list.stdout).toContain("gitea");
    const json = await cli("list", "--output", "json");
    expect(JSON.parse(json.stdout).map((t: any) => t.id)).toContain("uptime-kuma");
    const show = await cli("show", "pgadmin");
    expect(show.stdout).toContain("ADMIN_PASSWORD (secret, generated when not set): Sign-in password");
    expect(show.stdout).toContain("  services:");
    const missing = await cli("show", "nope");
    expect(missing.code).toBe(1);
  });

  it("deploys with --set and a domain (detached), and says why a deploy is refused", async () => {
    const r = await cli(
      "deploy",
      "pgadmin",
      "--name",
      "tpl-cli",
      "--set",
      "ADMIN_EMAIL=me@example.com",
      "--domain",
      "pga.example.com",
      "--detach",
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const f = files("tpl-cli");
    expect(f.env.ADMIN_EMAIL).toBe("me@example.com");
    expect(f.env.ADMIN_PASSWORD).toMatch(/^[1-9A-HJ-NP-Za-km-z]{24}$/);
    expect(f.compose).toContain("sundeck.domain: pga.example.com");
    const again = await cli("deploy", "pgadmin", "--name", "tpl-cli", "--set", "ADMIN_EMAIL=me@example.com");
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('app "tpl-cli" exists; "tpl-cli-2" is free');
    const bad = await cli("deploy", "pgadmin", "--name", "tpl-cli-2", "--set", "oops");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--set takes KEY=VALUE");
    await ended("tpl-cli");
  });
});
