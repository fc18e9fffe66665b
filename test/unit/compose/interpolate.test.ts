/** Compose variable interpolation: every operator, missing variables, no process env, every string of a document. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
import { describe, expect, it } from "bun:test";
import { interpolate, interpolateString } from "../../../src/compose/interpolate";
import { ComposeError } from "../../../src/compose/model";

const env = { SET: "value", EMPTY: "", PORT: "8080", PATH_VAR: "/srv" };

describe("interpolateString", () => {
  it.each([
    ["$SET", "value"],
    ["${SET}", "value"],
    ["a-$SET-b", "a-value-b"],
    ["${SET}x", "valuex"],
    ["$SET.x", "value.x"],
    ["${PORT}:80", "8080:80"],
    ["no variables", "no variables"],
    ["$$", "$"],
    ["$$SET", "$SET"],
    ["$${SET}", "${SET}"],
    ["a$$$SET", "a$value"],
    ["${UNSET:-def}", "def"],
    ["${EMPTY:-def}", "def"],
    ["${SET:-def}", "value"],
    ["${UNSET-def}", "def"],
    ["${EMPTY-def}", ""],
    ["${UNSET:+alt}", ""],
    ["${EMPTY:+alt}", ""],
    ["${SET:+alt}", "alt"],
    ["${UNSET+alt}", ""],
    ["${EMPTY+alt}", "alt"],
    ["${SET?err}", "value"],
    ["${EMPTY?err}", ""],
    ["${SET:?err}", "value"],
    ["${UNSET:-${SET}}", "value"],
    ["${UNSET:-${ALSO_UNSET:-deep}}", "deep"],
    ["${UNSET:-a ${SET} b}", "a value b"],
    ["${UNSET:-$$literal}", "$literal"],
    ["${UNSET:-}", ""],
    ["${UNSET:-with:colon-and-dash}", "with:colon-and-dash"],
    ["${SET:+${PORT}}", "8080"],
  ])("reads %s as %s", (text, out) => {
    expect(interpolateString(text, env)).toBe(out);
  });

  it("turns unset variables into empty strings and collects their names", () => {
    const missing = new Set<string>();
    expect(interpolateString("$A-${B}-${C:-x}-${SET}", env, missing)).toBe("--x-value");
    expect([...missing].sort()).toEqual(["A", "B"]);
  });

  it.each([
    ["${UNSET:?needs a value}", "required variable UNSET is missing a value: needs a value"],
    ["${EMPTY:?empty is not enough}", "required variable EMPTY is missing a value: empty is not enough"],
    ["${UNSET?set it}", "required variable UNSET is missing a value: set it"],
    ["${UNSET:?}", "required variable UNSET is missing a value"],
  ])("fails %s with an interpolation error", (text, message) => {
    let err: unknown;
    try {
      interpolateString(text, env);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ComposeError);
    expect((err as ComposeError).rule).toBe("interpolation");
    expect((err as ComposeError).service).toBeNull();
    expect((err as ComposeError).message).toBe(`Bad Request: ${message}`);
  });

  // compose v1 refused these; compose v2 (compose-go) keeps a `$` that starts no reference as written
  it.each(["$1", "price $", "$ x", "$-", "a$.b"])("keeps the lone dollar in %s", (text) => {
    expect(interpolateString(text, env)).toBe(text);
  });

  it.each(["${", "${SET", "${}", "${1BAD}", "${SET!x}", "${SET:-unclosed"])("rejects the malformed reference %s", (text) => {
    expect(() => interpolateString(text, env)).toThrow("invalid interpolation format");
  });

  it("never reads the process environment", () => {
    process.env.SUNDECK_INTERPOLATE_PROBE = "leak";
    try {
      const missing = new Set<string>();
      expect(interpolateString("${SUNDECK_INTERPOLATE_PROBE}", {}, missing)).toBe("");
      expect(missing.has("SUNDECK_INTERPOLATE_PROBE")).toBe(true);
      expect(interpolateString("$HOME", {})).toBe("");
    } finally {
      delete process.env.SUNDECK_INTERPOLATE_PROBE;
    }
  });

  it("does not look variables up on the object prototype", () => {
    expect(interpolateString("${constructor}${toString}", {})).toBe("");
  });
});

describe("interpolate", () => {
  it("interpolates every string value at any depth and leaves keys and other scalars alone", () => {
    const doc = {
      services: {
        $SET: { image: "nginx:${TAG:-1.25}", ports: ["${PORT}:80", 443], privileged: false, environment: { $KEY: "$SET" } },
      },
    };
    expect(interpolate(doc, env)).toEqual({
      services: { $SET: { image: "nginx:1.25", ports: ["8080:80", 443], privileged: false, environment: { $KEY: "value" } } },
    });
  });

  it("returns a new document and leaves the input unchanged", () => {
    const doc = { a: ["$SET"] };
    const out = interpolate(doc, env);
    expect(doc.a[0]).toBe("$SET");
    expect(out.a[0]).toBe("value");
  });

  it("keeps null values", () => {
    expect(interpolate({ a: null, b: [null] }, env)).toEqual({ a: null, b: [null] });
  });
});
