/** The line chart's scale (components/LineChart.tsx): maxima are round numbers. */
import { expect, test } from "bun:test";
import { niceMax } from "../../../../src/dashboard/components/LineChart";

test("chart maxima are round", () => {
  expect(niceMax(0)).toBe(1);
  expect(niceMax(0.37)).toBe(0.5);
  expect(niceMax(7)).toBe(10);
  expect(niceMax(120)).toBe(200);
  expect(niceMax(2.2)).toBe(2.5);
});
