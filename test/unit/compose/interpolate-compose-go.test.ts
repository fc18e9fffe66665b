/** Interpolation gives compose-go's output or error on every case of its ported template and interpolation tables. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: compose interpolation syntax is the subject under test
/**
 * The test tables of compose-go (github.com/compose-spec/compose-go, v2) for variable interpolation, ported: for each
 * case our interpolateString, given the same mapping, must give compose-go's output or error.
 *
 * Sources: template/template_test.go (T) and interpolation/interpolation_test.go (I).
 * compose-go logs a warning for every plain `$NAME`/`${NAME}` without a value; our equivalent is the `missing` set,
 * so the "warns" cases check that set.
 *
 * Not ported, because they test Go-only hooks or functions Sundeck does not have:
 * - T TestSubstituteWithCustomFunc: custom SubstituteFunc.
 * - T TestSubstituteWithReplacementFunc, TestSubstituteWithReplacementAppliedFunc: custom ReplacementFunc (the one
 *   plain Substitute call at the end of the first is ported below).
 * - T TestSubstitutionFunctionChoice calls the internal getSubstitutionFunctionForTemplate; ported as behaviour: the
 *   operator picked decides where the name ends and what the argument is.
 * - template/variables_test.go TestExtractVariables: ExtractVariables (listing variables with their defaults), which
 *   Sundeck does not implement.
 * - I TestInterpolateWithDefaults: reads the process environment, which Sundeck never does.
 * - I TestInterpolateWithCast, TestPathMatches: the type-cast table and tree paths (src/compose/cast.ts).
 */
import { describe, expect, it } from "bun:test";
import { interpolate, interpolateString } from "../../../src/compose/interpolate";
import { ComposeError } from "../../../src/compose/model";

/** template_test.go `defaults`. */
const defaults = { FOO: "first", BAR: "", JSON: '{"json":2}' };

function run(template: string, env: Record<string, string> = defaults): { out: string; missing: string[] } {
  const missing = new Set<string>();
  const out = interpolateString(template, env, missing);
  return { out, missing: [...missing].sort() };
}

function failure(template: string, env: Record<string, string> = defaults): ComposeError {
  try {
    interpolateString(template, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ComposeError);
    expect((e as ComposeError).rule).toBe("interpolation");
    return e as ComposeError;
  }
  throw new Error(`expected ${JSON.stringify(template)} to fail`);
}

describe("compose-go template_test.go: substitution results", () => {
  it.each([
    // TestEscaped
    ["$${foo}", "${foo}"],
    // TestSubstituteNoMatch
    ["foo", "foo"],
    // TestUnescaped: a `$` the pattern does not match stays as written
    ["a $ string", "a $ string"],
    ["^REGEX$", "^REGEX$"],
    ["$}", "$}"],
    ["$", "$"],
    // TestNonBraced (docker/compose#8601)
    ["$FOO-bar", "first-bar"],
    // TestNoValueNoDefault
    ["This ${missing} var", "This  var"],
    ["This ${BAR} var", "This  var"],
    // TestValueNoDefault
    ["This $FOO var", "This first var"],
    ["This ${FOO} var", "This first var"],
    // TestNoValueWithDefault
    ["ok ${missing:-def}", "ok def"],
    ["ok ${missing-def}", "ok def"],
    // TestEmptyValueWithSoftDefault .. TestNonAlphanumericDefault
    ["ok ${BAR:-def}", "ok def"],
    ["ok ${FOO:-def}", "ok first"],
    ["ok ${BAR-def}", "ok "],
    ["ok ${UNSET_VAR:+presence_value}", "ok "],
    ["ok ${UNSET_VAR+presence_value}", "ok "],
    ["ok ${FOO:+presence_value}", "ok presence_value"],
    ["ok ${FOO+presence_value}", "ok presence_value"],
    ["ok ${BAR+presence_value}", "ok presence_value"],
    ["ok ${BAR:+presence_value}", "ok "],
    ["ok ${BAR:-/non:-alphanumeric}", "ok /non:-alphanumeric"],
    // TestInterpolationExternalInterference
    ["-ok ${BAR:-defaultValue}", "-ok defaultValue"],
    ["+ok ${UNSET:-${BAR-defaultValue}}", "+ok "],
    ["-ok ${FOO:-defaultValue}", "-ok first"],
    [":-ok ${UNSET-defaultValue}", ":-ok defaultValue"],
    [":-ok ${BAR-defaultValue}", ":-ok "],
    [":?ok ${BAR-defaultValue}", ":?ok "],
    [":?ok ${BAR:-defaultValue}", ":?ok defaultValue"],
    [":+ok ${BAR:-defaultValue}", ":+ok defaultValue"],
    ["+ok ${BAR-defaultValue}", "+ok "],
    ["?ok ${BAR:-defaultValue}", "?ok defaultValue"],
    // TestDefaultsWithNestedExpansion
    ["ok ${UNSET_VAR-$FOO}", "ok first"],
    ["ok ${UNSET_VAR-${FOO}}", "ok first"],
    ["ok ${UNSET_VAR-${FOO} ${FOO}}", "ok first first"],
    ["ok ${BAR:-$FOO}", "ok first"],
    ["ok ${BAR:-${FOO}}", "ok first"],
    ["ok ${BAR:-${FOO} ${FOO}}", "ok first first"],
    ["ok ${BAR+$FOO}", "ok first"],
    ["ok ${BAR+$FOO ${FOO:+second}}", "ok first second"],
    // TestDefaultsForMandatoryVariables
    ["ok ${FOO:?err}", "ok first"],
    ["ok ${FOO?err}", "ok first"],
    ["ok ${BAR?err}", "ok "],
    // TestSubstituteWithReplacementFunc, its last (plain Substitute) call
    ["ok ${SUBDOMAIN:-redis}.${FOO:?}", "ok redis.first"],
    // TestPrecedence, the cases without an error
    ["${UNSET_VAR-myerror?msg}", "myerror?msg"],
    ["${FOO?bar-baz}", "first"],
    ["${BAR:-default_value_for_empty_var}", "default_value_for_empty_var"],
    ["${UNSET_VAR-default_value_for_unset_var}", "default_value_for_unset_var"],
    // TestNoValueWithCurlyBracesDefault
    ['ok ${missing:-{"json":1}}', 'ok {"json":1}'],
    ['ok ${missing-{"json":1}}', 'ok {"json":1}'],
    // TestValueWithCurlyBracesDefault
    ['ok ${JSON:-{"json":1}}', 'ok {"json":2}'],
    ['ok ${JSON-{"json":1}}', 'ok {"json":2}'],
  ])("%s gives %s", (template, expected) => {
    expect(run(template).out).toBe(expected);
  });
});

describe("compose-go template_test.go: invalid templates (TestInvalid)", () => {
  it.each(["${", "${}", "${ }", "${ foo}", "${foo }", "${foo!}"])("%s is an invalid template", (template) => {
    expect(failure(template).message).toContain("invalid interpolation format");
  });
});

describe("compose-go template_test.go: required variables", () => {
  it.each([
    // TestMandatoryVariableErrors
    ["not ok ${UNSET_VAR:?Mandatory Variable Unset}", "required variable UNSET_VAR is missing a value: Mandatory Variable Unset"],
    ["not ok ${BAR:?Mandatory Variable Empty}", "required variable BAR is missing a value: Mandatory Variable Empty"],
    ["not ok ${UNSET_VAR:?}", "required variable UNSET_VAR is missing a value"],
    ["not ok ${UNSET_VAR?Mandatory Variable Unset}", "required variable UNSET_VAR is missing a value: Mandatory Variable Unset"],
    ["not ok ${UNSET_VAR?}", "required variable UNSET_VAR is missing a value"],
    // TestMandatoryVariableErrorsWithNestedExpansion
    [
      "not ok ${UNSET_VAR:?Mandatory Variable ${FOO}}",
      "required variable UNSET_VAR is missing a value: Mandatory Variable first",
    ],
    ["not ok ${UNSET_VAR?Mandatory Variable ${FOO}}", "required variable UNSET_VAR is missing a value: Mandatory Variable first"],
    // TestPrecedence, the case with an error
    ["${UNSET_VAR?bar-baz}", "required variable UNSET_VAR is missing a value: bar-baz"],
  ])("%s fails: %s", (template, message) => {
    expect(failure(template).message).toBe(`Bad Request: ${message}`);
  });
});

describe("compose-go template_test.go: warnings are the missing set", () => {
  it("TestLazyDefaultDoesNotWarn: an unused alternative is not looked up", () => {
    expect(run("${A:+${A},}B")).toEqual({ out: "B", missing: [] });
  });

  it("TestLazyDefaultWarnsWhenUsed: a used default is", () => {
    expect(run("${A:-${B}}")).toEqual({ out: "", missing: ["B"] });
  });

  it("TestLazyRequiredMessageDoesNotWarn: an unused error message is not looked up", () => {
    expect(run("${A?${B}}", { A: "value" })).toEqual({ out: "value", missing: [] });
  });
});

describe("compose-go template_test.go: TestSubstitutionFunctionChoice, as behaviour", () => {
  // The operator occurring first is used: the name ends before it and the argument is everything after it.
  it.each([
    ["VARNAME:?val?ue", ":?"],
    ["VARNAME?val:?ue", "?"],
    ["VARNAME?va-lu+e:?e", "?"],
    ["VARNAME?va+lu-e:?e", "?"],
    ["VARNAME:-value", ":-"],
    ["VARNAME-va:-lu:?e", "-"],
    ["VARNAME-va+lu?e", "-"],
    ["VARNAME-va?lu+e", "-"],
    ["VARNAME:+va:?lu:-e", ":+"],
    ["VARNAME+va:+lue", "+"],
    ["VARNAME+va?lu-e", "+"],
    ["VARNAME+va-lu?e", "+"],
  ])("${%s} uses %s", (input, symbol) => {
    const arg = input.slice("VARNAME".length + symbol.length);
    const template = `\${${input}}`;
    if (symbol.endsWith("?")) {
      expect(failure(template, {}).message).toBe(`Bad Request: required variable VARNAME is missing a value: ${arg}`);
    } else if (symbol.endsWith("-")) {
      expect(run(template, {}).out).toBe(arg);
    } else {
      expect(run(template, { VARNAME: "set" }).out).toBe(arg);
    }
  });
});

describe("compose-go interpolation_test.go", () => {
  /** interpolation_test.go `defaults`. */
  const idefaults = { USER: "jenny", FOO: "bar", count: "5", REQUIRED: "true" };

  it("TestInterpolate: every string value of a document", () => {
    const services = {
      servicea: {
        image: "example:${USER}",
        volumes: ["$FOO:/target"],
        logging: { driver: "${FOO}", options: { user: "$USER" } },
      },
    };
    expect(interpolate(services, idefaults)).toEqual({
      servicea: {
        image: "example:jenny",
        volumes: ["bar:/target"],
        logging: { driver: "bar", options: { user: "jenny" } },
      },
    });
  });

  it("TestInvalidInterpolation", () => {
    expect(() => interpolate({ servicea: { image: "${" } }, idefaults)).toThrow("invalid interpolation format");
  });

  // TestValidUnexistentInterpolation (no variable set)
  it.each([
    ["{{{ ${FOO:-foo_} }}}", "{{{ foo_ }}}"],
    ["{{{ ${FOO:-foo-bar-value} }}}", "{{{ foo-bar-value }}}"],
    ["{{{ ${FOO:-foo?bar?value} }}}", "{{{ foo?bar?value }}}"],
    ["{{{ ${FOO:-foo:?bar:?value} }}}", "{{{ foo:?bar:?value }}}"],
    ["{{{ ${FOO:-foo} ${BAR:-DEFAULT_VALUE} }}}", "{{{ foo DEFAULT_VALUE }}}"],
    ["{{{ ${BAR} }}}", "{{{  }}}"],
    ["${FOO:-baz} }}}", "baz }}}"],
    ["${FOO-baz} }}}", "baz }}}"],
    ["${FOO:-${BAR:-${ZOT:-qix}}}", "qix"],
    ["${FOO:-${BAR:-x}_test_${BAR:-y}}", "x_test_y"],
    ["${FOO:-${BAR:-x}_test}", "x_test"],
    ["${FOO:-${BAR:-${ZOT:-x}}_test}", "x_test"],
  ])("unset: %s gives %s", (template, expected) => {
    expect(run(template, {}).out).toBe(expected);
  });

  it.each([
    ["{{{ ${FOO:?foo_} }}}", "foo_"],
    ["{{{ ${FOO:?foo-bar-value} }}}", "foo-bar-value"],
    ["{{{ ${FOO:?foo} ${BAR:-DEFAULT_VALUE} }}}", "foo"],
    ["${FOO:?foo} ${BAR:?bar}", "foo"],
    ["${FOO:?baz} }}}", "baz"],
    ["${FOO?baz} }}}", "baz"],
  ])("unset: %s fails with %s", (template, reason) => {
    expect(failure(template, {}).message).toBe(`Bad Request: required variable FOO is missing a value: ${reason}`);
  });

  // TestValidExistentInterpolation
  it.each([
    ["{{{ ${FOO:-foo_} }}}", "{{{ bar }}}"],
    ["{{{ ${FOO:-foo-bar-value} }}}", "{{{ bar }}}"],
    ["{{{ ${FOO:-foo} ${BAR:-DEFAULT_VALUE} }}}", "{{{ bar DEFAULT_VALUE }}}"],
    ["{{{ ${BAR} }}}", "{{{  }}}"],
    ["${FOO:-baz} }}}", "bar }}}"],
    ["${FOO-baz} }}}", "bar }}}"],
    ["{{{ ${FOO:-foo} ${USER:-bar} }}}", "{{{ bar jenny }}}"],
    ["{{{ ${USER} }}}", "{{{ jenny }}}"],
  ])("set: %s gives %s", (template, expected) => {
    expect(run(template, idefaults).out).toBe(expected);
  });
});

/**
 * Consequences of compose-go's pattern and brace counting worth pinning down; each expectation was checked against
 * compose-go's template.Substitute.
 */
describe("compose-go behaviour beyond its own tables", () => {
  it.each([
    ['${JSON:-{"a":1}}', {}, '{"a":1}'],
    ["$1 $ $- $. a$", {}, "$1 $ $- $. a$"],
    ["${A:-x} and ${FOO}", defaults, "x and first"],
    ["${UNSET:-a}${FOO}}", defaults, "afirst}"],
    ["${A:-${B:-${FOO}}}x", defaults, "firstx"],
    // a name is `[_a-z][_a-z0-9]*` under Go's case folding, which adds ſ and the Kelvin sign
    ["$ſ-$\u212A", { ſ: "s", "\u212A": "k" }, "s-k"],
    ["$é", {}, "$é"],
    // the argument stops at the end of the line, so a `}` on the next one does not close it
    ["${A:-x\n}", null, "invalid"],
    // counting skips the character after every `{`, so `{}` opens without closing and the match runs on
    ["${A:-{}} ${B}", null, "invalid"],
    ["${A::-x}", null, "invalid"],
  ] as const)("%s", (template, env, expected) => {
    if (env === null) expect(failure(template).message).toContain("invalid interpolation format");
    else expect(run(template, env).out).toBe(expected);
  });

  it("stops hostile nesting with an interpolation error instead of exhausting the stack", () => {
    const deep = `${"${A:-".repeat(1000)}x${"}".repeat(1000)}`;
    expect(failure(deep).message).toContain("nested too deeply");
  });
});
