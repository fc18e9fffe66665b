/**
 * The compose corpus through the whole deploy preparation (`prepare`: parse, interpolate, check, render): every
 * hostile fixture refused with its rule and service, every benign one accepted and rendered with its published ports
 * bound to loopback unless the file named an interface.
 */
import { describe, expect, it } from "bun:test";
import { parse } from "yaml";
import { ComposeError } from "../../../src/compose/model";
import { parsePorts } from "../../../src/compose/ports";
import { prepare } from "../../../src/compose/prepare";
import { type Fixture, fixtureReader, loadFixtures, POLICY } from "./fixtures";

const unsafe = loadFixtures("security");
const safe = loadFixtures("ok");

function run(f: Fixture) {
  return prepare(f.text, f.envText, f.policy, fixtureReader(f));
}

function rejection(f: Fixture): ComposeError {
  try {
    run(f);
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
  throw new Error(`${f.name} was accepted`);
}

describe("security fixtures", () => {
  it("holds the hostile corpus, each file saying what it expects", () => {
    expect(unsafe.length).toBeGreaterThanOrEqual(250);
    for (const f of unsafe) expect(f.expect, `${f.name} has no # expect: line`).not.toBeNull();
  });

  it.each(unsafe.map((f) => [f.name, f] as const))("rejects %s with its rule and service", (_name, f) => {
    const err = rejection(f);
    expect(err.status).toBe(400);
    expect(`${err.rule} ${err.service ?? "-"}`).toBe(`${f.expect!.rule} ${f.expect!.service ?? "-"}`);
    if (f.expect!.service) expect(err.message).toStartWith(`Bad Request: service "${f.expect!.service}": `);
    // the resolved app directory is a server path: only shown when the file itself wrote it
    if (!f.text.includes(POLICY.appDir)) expect(err.message).not.toContain(POLICY.appDir);
  });
});

describe("ok fixtures", () => {
  it("holds at least 40 real-world files", () => {
    expect(safe.filter((f) => f.name.startsWith("rw-")).length).toBeGreaterThanOrEqual(40);
  });

  it.each(safe.map((f) => [f.name, f] as const))("accepts %s and binds its ports to loopback", (_name, f) => {
    const prepared = run(f);
    const rendered = parse(prepared.rendered).services as Record<string, Record<string, unknown>>;
    for (const [name, svc] of Object.entries(prepared.project.doc.services as Record<string, Record<string, unknown>>)) {
      const given = parsePorts(name, svc.ports);
      const out = parsePorts(name, rendered[name]?.ports);
      expect(out.length).toBe(given.length);
      out.forEach((p, i) => {
        expect(p.hostIp).toBe(given[i].hostIp || "127.0.0.1");
        expect([p.published, p.target, p.protocol]).toEqual([given[i].published, given[i].target, given[i].protocol]);
      });
    }
  });
});
