/**
 * A state for the git sync files tests, made through the real services: an app with rules, backup configs (local
 * and S3) and grants, users, a registry, webhooks, an API key. Every secret planted is returned, so a test can look
 * for each one in the exported bytes.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Ctx } from "../../../../src/context";
import { composeOf, seedApp } from "../../../helpers/backups";
import { PASSWORD } from "../../../helpers/server";

export const ACTOR = { userId: null, name: "test", source: "cli" as const, ip: null };

export const SECRETS = {
  s3: "S3-SECRET-KEY-7f3a9c",
  webhook: "WEBHOOK-SIGNING-SECRET-51be",
  webhookPath: "T0SLACKTOKEN/B0PATHTOKEN/XXSLACKSECRETXX",
  registry: "REGISTRY-PASSWORD-88d1",
  registryUrl: "REGURLPASS-19c2",
};

/** Create app `slug` (live, services `db` and `app`) and its directory with a compose file under `appsDir`. */
export function seedAppDir(ctx: Ctx, appsDir: string, slug: string) {
  const compose = composeOf("db", "app");
  seedApp(ctx, slug, compose);
  mkdirSync(join(appsDir, slug), { recursive: true });
  writeFileSync(join(appsDir, slug, "docker-compose.yml"), compose);
}

/** Plant the state; returns every secret it holds (including the password hash and the API key). */
export async function plantState(ctx: Ctx, appsDir: string, slug = "web") {
  seedAppDir(ctx, appsDir, slug);
  const ops = ctx.webhooks.create(
    { name: "ops", url: `https://hooks.slack.com/services/${SECRETS.webhookPath}`, kind: "slack" },
    ACTOR,
  );
  ctx.webhooks.create({ name: "pager", url: "https://pager.example.com/hook", kind: "generic", secret: SECRETS.webhook }, ACTOR);
  const P = {
    user: { id: 0, username: "t", role: "super_admin" as const, tokenVersion: 0 },
    via: "apikey" as const,
    credential: "",
  };
  ctx.alerts.create(
    { name: "mem high", kind: "memory", threshold: 90, duration: "5m", app_slug: slug, webhook_ids: [ops.id] },
    P,
    ACTOR,
  );
  ctx.alerts.create({ name: "cpu high", kind: "cpu", threshold: 80, duration: "1m", app_slug: slug }, P, ACTOR);
  ctx.alerts.create({ name: "disk low", kind: "disk", threshold: 10, duration: "0s", app_slug: null }, P, ACTOR);
  ctx.backups.configs.create(
    slug,
    { strategy: "postgres", service: "db", target: { kind: "local" }, schedule: "0 3 * * *", retention_count: 7 },
    ACTOR,
  );
  ctx.backups.configs.create(
    slug,
    {
      strategy: "volume",
      service: "app",
      target: {
        kind: "s3",
        endpoint: "https://s3.example.com",
        bucket: "backups",
        prefix: "web",
        region: "",
        access_key: "AKIAEXAMPLE",
        secret_key: SECRETS.s3,
      },
    },
    ACTOR,
  );
  ctx.registries.create({ name: "ghcr", url: "https://ghcr.io", username: "bot", password: SECRETS.registry }, ACTOR);
  ctx.registries.create(
    {
      name: "private",
      url: `https://bot:${SECRETS.registryUrl}@registry.example.com:5000/v2?token=${SECRETS.registryUrl}`,
      username: "bot",
      password: SECRETS.registry,
    },
    ACTOR,
  );
  const alice = await ctx.users.create({ username: "alice", password: PASSWORD, role: "manage" }, ACTOR);
  const bob = await ctx.users.create({ username: "bob", password: PASSWORD, role: "viewer" }, ACTOR);
  ctx.users.grant(alice.id, slug, ACTOR);
  ctx.users.grant(bob.id, slug, ACTOR);
  const key = ctx.apiKeys.create(alice, "ci", null, ACTOR);
  return {
    alice,
    bob,
    secrets: [
      ...Object.values(SECRETS),
      key.key,
      alice.passwordHash,
      bob.passwordHash,
      ctx.userRepo.byUsername("root")!.passwordHash,
      ...ctx.db.sqlite
        .query(
          `SELECT secret_enc AS s FROM backup_configs WHERE secret_enc IS NOT NULL UNION SELECT secret_enc FROM webhooks
            WHERE secret_enc IS NOT NULL UNION SELECT password_sealed FROM registries UNION SELECT key_hash FROM api_keys`,
        )
        .all()
        .map((r: any) => r.s as string),
    ],
  };
}
