/**
 * Git sync and running apps (real Docker engine, real smart-HTTP remote): an app deployed through the API is pushed;
 * a remote change to its compose file is pulled and the app redeployed as git_sync; a hostile compose file pushed to
 * the remote is refused, reported (status and alert history) and never deployed, and local content wins it back.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appActivity, freePort, waitApp, webCompose } from "../../helpers/apps";
import { dockerOk, removeProject } from "../../helpers/docker";
import { type GitServer, otherClone, remoteFile, startGitServer } from "../../helpers/git-server";
import { GIT_TOKEN, type SyncSetup, scanRemote, startSynced, waitStatus } from "../../helpers/gitsync";
import { until } from "../../helpers/http";

setDefaultTimeout(90_000);

const SLUG = `gsync-${process.pid}`;
let gs: GitServer;
let s: SyncSetup;
let port: number;

beforeAll(async () => {
  gs = startGitServer({ token: GIT_TOKEN });
  s = await startSynced(gs, { docker: true });
  port = await freePort();
  await waitStatus(s.t.root, (st) => st.state === "in_sync");
});
afterAll(async () => {
  await s?.t.stop();
  await removeProject(`sundeck-${SLUG}`, { volumes: true });
  await gs.stop();
});
// after every test (temp dirs go in the first afterAll): only allowed files and no secret on the remote
afterEach(() => {
  scanRemote(s.bare, [s.t.ctx.config.master_secret]);
});

const envOf = async (app: any) =>
  dockerOk("inspect", "-f", "{{range .Config.Env}}{{println .}}{{end}}", app.services[0].containers[0].id);

describe("apps through git sync", () => {
  it("pushes an app deployed through the API", async () => {
    const r = await s.t.root.post("/api/apps/deploy", { slug: SLUG, compose: webCompose(port), env: { GREETING: "hello" } });
    expect(r.status).toBe(202);
    await waitApp(s.t.root, SLUG, (a) => a.status === "running");
    await until(() => remoteFile(s.bare, `${SLUG}/docker-compose.yml`).includes("sundeck-test/web"), {
      timeout: 20_000,
      what: "the compose file pushed",
    });
    expect(remoteFile(s.bare, `${SLUG}/.env`)).toContain("GREETING=hello");
  });

  it("pulls a remote change to the compose file and redeploys the running app as git_sync", async () => {
    const other = otherClone(s.bare);
    const compose = readFileSync(join(other.dir, SLUG, "docker-compose.yml"), "utf8");
    await other.commitAndPush(
      {
        [`${SLUG}/docker-compose.yml`]: compose
          .replace("    stop_grace_period: 1s\n", "    stop_grace_period: 1s\n    labels:\n      from: remote\n")
          .replace("GREETING:-hello", "GREETING:-hi"),
      },
      "label from the remote",
    );
    await other.commitAndPush({ [`${SLUG}/.env`]: "GREETING=bonjour\n" }, "greet in french");
    expect((await s.t.root.post("/api/git/sync-now")).status).toBe(202);
    const app = await waitApp(s.t.root, SLUG, (a) => a.current_version?.version === 2 && a.status === "running");
    expect(await envOf(app)).toContain("GREETING=bonjour");
    const st = await waitStatus(s.t.root, (x) => x.state === "in_sync");
    expect(st.last_error).toBeNull();
    const entries = await appActivity(s.t.root, SLUG);
    expect(entries.some((e) => e.actor_source === "git_sync")).toBe(true);
    expect(readFileSync(join(s.t.ctx.config.apps_dir, SLUG, ".env"), "utf8")).toBe("GREETING=bonjour\n");
  });

  it("refuses a hostile compose file from the remote: reported, not deployed, local content kept", async () => {
    const other = otherClone(s.bare);
    const compose = readFileSync(join(other.dir, SLUG, "docker-compose.yml"), "utf8");
    const hostile = compose.replace(
      "    image: sundeck-test/web:latest\n",
      "    image: sundeck-test/web:latest\n    privileged: true\n",
    );
    expect(hostile).toContain("privileged: true");
    await other.commitAndPush({ [`${SLUG}/docker-compose.yml`]: hostile }, "make it privileged");
    expect((await s.t.root.post("/api/git/sync-now")).status).toBe(202);
    const st = await waitStatus(s.t.root, (x) => (x.last_error ?? "").includes("refused"));
    expect(st.last_error).toContain(`${SLUG}/docker-compose.yml`);
    expect(st.last_error).toContain("privileged");
    const history = (await s.t.root.get("/api/alerts/history")).json.entries;
    expect(history.some((h: any) => h.kind === "git_sync_refused" && h.app_slug === SLUG)).toBe(true);
    expect(readFileSync(join(s.t.ctx.config.apps_dir, SLUG, "docker-compose.yml"), "utf8")).not.toContain("privileged");
    const app = await waitApp(s.t.root, SLUG, (a) => a.status === "running");
    expect(app.current_version.version).toBe(2);
    const privileged = await dockerOk("inspect", "-f", "{{.HostConfig.Privileged}}", app.services[0].containers[0].id);
    expect(privileged.trim()).toBe("false");
    // local won: the merge pushed back the safe file
    await until(() => !remoteFile(s.bare, `${SLUG}/docker-compose.yml`).includes("privileged"), {
      timeout: 20_000,
      what: "the local file pushed back",
    });
  });
});
