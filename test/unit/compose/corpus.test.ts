import { describe, expect, it } from "bun:test";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { checkSafety } from "../../../src/compose/security";
import { fixtureReader, loadFixtures, POLICY } from "./fixtures";

const unsafe = loadFixtures("security");
const safe = loadFixtures("ok");

function rejection(f: (typeof unsafe)[number]): ComposeError {
  try {
    checkSafety(parseCompose(f.text, f.env), POLICY, fixtureReader(f));
  } catch (e) {
    if (e instanceof ComposeError) return e;
    throw e;
  }
  throw new Error(`${f.name} was accepted`);
}

describe("security fixtures", () => {
  it("holds at least one fixture per rule and bypass attempt", () => {
    expect(unsafe.length).toBeGreaterThanOrEqual(45);
    for (const f of unsafe) expect(f.expect, `${f.name} has no # expect: line`).not.toBeNull();
  });

  it.each(unsafe.map((f) => [f.name, f] as const))("rejects %s with its rule and service", (_name, f) => {
    const err = rejection(f);
    expect(err.status).toBe(400);
    expect(err.rule).toBe(f.expect!.rule);
    expect(err.service).toBe(f.expect!.service);
    if (f.expect!.service) expect(err.message).toStartWith(`Bad Request: service "${f.expect!.service}": `);
    // the resolved app directory is a server path: only shown when the file itself wrote it
    if (!f.text.includes(POLICY.appDir)) expect(err.message).not.toContain(POLICY.appDir);
  });
});

describe("ok fixtures", () => {
  it.each(safe.map((f) => [f.name, f] as const))("accepts %s", (_name, f) => {
    expect(() => checkSafety(parseCompose(f.text, f.env), POLICY, fixtureReader(f))).not.toThrow();
  });
});
