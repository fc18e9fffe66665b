/**
 * A Redis app (a locally built image) backed up through the API to an S3 server (s3rver) and to local disk: keys
 * written, a fresh RDB backed up, the keys flushed, each run restored (the service stopped, the RDB written over its
 * dump file, the service started), the keys read back. The second service asks for a password it reads from a
 * compose secret, named by REDIS_PASSWORD_FILE (as the bitnami image takes it): `redis-cli --rdb` must read it. A
 * REDIS_PASSWORD_FILE naming no file fails the backup, saying which file and which variable.
 */
import { expect, it } from "bun:test";
import { describeDbRoundTrip, type ServiceExec } from "../../helpers/backups";

const PASSWORD = "redis-file-secret";
const cli = (exec: ServiceExec, script: string) =>
  exec(["sh", "-c", script], [`REDISCLI_AUTH=${PASSWORD}`]).then((o) => o.trim());

const app = describeDbRoundTrip({
  strategy: "redis",
  image: "redis",
  compose: (image) => `services:
  cache:
    image: ${image}
    volumes:
      - data:/data
    stop_grace_period: 2s
  cachefile:
    image: ${image}
    command: ["sh", "-c", "exec redis-server --protected-mode no --requirepass \\"$$(cat /run/secrets/redis_pw)\\""]
    environment:
      REDIS_PASSWORD_FILE: /run/secrets/redis_pw
    secrets: [redis_pw]
    volumes:
      - filedata:/data
    stop_grace_period: 2s
  cachebad:
    image: ${image}
    environment:
      REDIS_PASSWORD_FILE: /run/secrets/missing
    stop_grace_period: 2s
volumes:
  data: {}
  filedata: {}
`,
  secretFiles: { redis_pw: `${PASSWORD}\n` },
  cases: [
    { service: "cache", target: "s3" },
    { service: "cache", target: "local" },
    { service: "cachefile", target: "local", what: "REDIS_PASSWORD_FILE" },
  ],
  ready: async (exec) => {
    const pong = await cli(exec, "redis-cli ping");
    if (pong !== "PONG") throw new Error(`redis answered ${pong}`);
  },
  seed: (exec) => cli(exec, 'for i in $(seq 0 199); do echo "SET key:$i \\"value $i\\""; done | redis-cli'),
  destroy: (exec) => cli(exec, "redis-cli flushall"),
  read: (exec) => cli(exec, "redis-cli dbsize; redis-cli get key:7"),
  expected: "200\nvalue 7",
  head: /^REDIS/,
});

it("fails the backup when the file REDIS_PASSWORD_FILE names cannot be read, naming the file", async () => {
  const s = app.server();
  const c = await s.root.post(`/api/apps/${app.slug}/backups/configs`, {
    strategy: "redis",
    service: "cachebad",
    target: { kind: "local" },
  });
  expect(c.status).toBe(201);
  const r = await s.root.post(`/api/backups/configs/${c.json.id}/run`);
  await s.ctx.backups.waitRun(c.json.id);
  const run = (await s.root.get(`/api/apps/${app.slug}/backups/runs`)).json.find((x: any) => x.id === r.json.run_id);
  expect(run).toMatchObject({ status: "failed", size_bytes: null });
  expect(run.error).toMatch(/cannot read the secret file \/run\/secrets\/missing \(REDIS_PASSWORD_FILE\)/);
}, 60_000);
