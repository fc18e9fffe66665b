/** The compose diff between versions: services, images, env keys (never values), ports, replicas, labels, health. */
import { describe, expect, it } from "bun:test";
import { diffCompose } from "../../../src/compose/diff";
import { parseCompose } from "../../../src/compose/parse";

const p = (text: string, env: Record<string, string> = {}) => parseCompose(text, env);

const base = `services:
  web:
    image: nginx:1.25
    ports: ["8080:80"]
    environment:
      API_KEY: \${API_KEY}
      MODE: prod
    labels:
      sundeck.domain: a.example.com
  db:
    image: postgres:16
`;

describe("diffCompose", () => {
  it("reports every service as added on a first deploy", () => {
    const d = diffCompose(null, p(base));
    expect(d.changes).toEqual(["services added: web, db"]);
    expect(d.summary).toBe("services added: web, db");
    expect(d.before).toBeNull();
  });

  it("says so when nothing changed", () => {
    const d = diffCompose(p(base), p(base));
    expect(d.changes).toEqual([]);
    expect(d.summary).toBe("no changes");
  });

  it("reports services added and removed", () => {
    const after = p(`${base.replace(/ {2}db:\n {4}image: postgres:16\n/, "")}  worker:\n    image: busybox\n`);
    const d = diffCompose(p(base), after);
    expect(d.changes).toEqual(["services added: worker", "services removed: db"]);
  });

  it("reports an image change in one line with the env key whose value changed", () => {
    const d = diffCompose(p(base, { API_KEY: "old" }), p(base.replace("nginx:1.25", "nginx:1.26"), { API_KEY: "new" }));
    expect(d.summary).toBe("web: image nginx:1.25 → nginx:1.26, env API_KEY changed");
    expect(d.changes).toEqual(["web: image nginx:1.25 → nginx:1.26", "web: env API_KEY changed"]);
  });

  it("never lets env values into changes, summary or snapshots", () => {
    const d = diffCompose(p(base, { API_KEY: "hunter2-old" }), p(base, { API_KEY: "hunter2-new" }));
    const text = JSON.stringify(d);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("prod");
    expect(d.after.services.web.env).toEqual({ API_KEY: "[redacted]", MODE: "[redacted]" });
    expect(d.before?.services.web.env).toEqual({ API_KEY: "[redacted]", MODE: "[redacted]" });
  });

  it("reports env keys added and removed", () => {
    const after = p(base.replace("      MODE: prod\n", "      DEBUG: '1'\n"));
    expect(diffCompose(p(base), after).changes).toEqual(["web: env DEBUG added", "web: env MODE removed"]);
  });

  it("reports port, replica, label and healthcheck changes", () => {
    const after = p(
      base
        .replace('["8080:80"]', '["9090:80", "53:53/udp"]')
        .replace("sundeck.domain: a.example.com", "sundeck.domain: b.example.com\n      tier: front")
        .replace(
          "  db:\n    image: postgres:16\n",
          "  db:\n    image: postgres:16\n    labels: [backup=on]\n    deploy: {replicas: 2}\n    healthcheck: {test: [CMD, pg_isready]}\n",
        ),
    );
    expect(diffCompose(p(base), after).changes).toEqual([
      "web: ports 8080:80 → 9090:80, 53:53/udp",
      "web: label sundeck.domain a.example.com → b.example.com",
      "web: label tier added (front)",
      "db: replicas 1 → 2",
      "db: label backup added (on)",
      "db: healthcheck added",
    ]);
    expect(diffCompose(after, p(base)).changes).toContain("db: label backup removed");
    expect(diffCompose(after, p(base)).changes).toContain("db: healthcheck removed");
  });

  it("snapshots each service's image, ports, replicas, labels and healthcheck", () => {
    const d = diffCompose(null, p(base));
    expect(d.after.services.web).toEqual({
      image: "nginx:1.25",
      build: false,
      env: { API_KEY: "[redacted]", MODE: "[redacted]" },
      ports: ["8080:80"],
      replicas: null,
      labels: { "sundeck.domain": "a.example.com" },
      healthcheck: false,
    });
  });

  it("trims a long summary to about 300 characters", () => {
    const many = Array.from({ length: 60 }, (_, i) => `  service-number-${i}:\n    image: x\n`).join("");
    const d = diffCompose(null, p(`services:\n${many}`));
    expect(d.summary.length).toBeLessThanOrEqual(300);
    expect(d.summary.endsWith("…")).toBe(true);
    expect(d.changes[0]).toContain("service-number-59");
  });
});
