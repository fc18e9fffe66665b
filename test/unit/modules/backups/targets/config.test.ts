/** Key rules and S3 settings validation: what a target accepts before it touches a disk or a bucket. */
import { describe, expect, it } from "bun:test";
import { checkKey, keySegment } from "../../../../../src/modules/backups/targets/keys";
import { parseS3Config } from "../../../../../src/modules/backups/targets/s3-config";

const good = { endpoint: "https://s3.example.com", bucket: "my-backups", accessKey: "AKIA1", secretKey: "shh" };

describe("backup keys", () => {
  it.each(["a.gz", "shop/db/20261127T032809Z-12.pgdump.gz", "state/sundeck_1.db.gz"])("accepts %p", (k) => {
    expect(checkKey(k)).toBe(k);
  });

  it.each(["", "/a", "a/", "../a", "a/../b", "./a", ".a", "a/.b", "a b", "a:b", "a\\b", "a\u0000b", "é", "a".repeat(1001)])(
    "refuses %p",
    (k) => {
      expect(() => checkKey(k)).toThrow("invalid backup key");
    },
  );

  it("turns any name into a valid segment", () => {
    expect(keySegment("2026-11-27T03:28:08.000Z")).toBe("2026-11-27T03-28-08.000Z");
    expect(checkKey(keySegment("../../etc"))).toBeTruthy();
    expect(checkKey(keySegment(".hidden"))).toBe("hidden");
    expect(keySegment("")).toBe("x");
  });
});

describe("s3 settings", () => {
  it("normalises prefix, region and addressing", () => {
    expect(parseS3Config({ ...good, prefix: "/sundeck/prod/", region: "" })).toEqual({
      endpoint: "https://s3.example.com",
      bucket: "my-backups",
      prefix: "sundeck/prod/",
      region: "us-east-1",
      accessKey: "AKIA1",
      secretKey: "shh",
      pathStyle: true,
    });
    expect(parseS3Config({ ...good, prefix: "", region: "eu-west-3", pathStyle: false })).toMatchObject({
      prefix: "",
      region: "eu-west-3",
      pathStyle: false,
    });
    expect(parseS3Config({ ...good, endpoint: "http://127.0.0.1:9000/" }).endpoint).toBe("http://127.0.0.1:9000");
  });

  it.each([
    { what: "an endpoint without a scheme", over: { endpoint: "s3.example.com" }, message: "s3 endpoint must be an http(s) URL" },
    { what: "an ftp endpoint", over: { endpoint: "ftp://s3.example.com" }, message: "s3 endpoint must be an http(s) URL" },
    {
      what: "an endpoint with credentials",
      over: { endpoint: "https://u:p@s3.example.com" },
      message: "must not carry credentials",
    },
    {
      what: "an endpoint with a path",
      over: { endpoint: "https://s3.example.com/bucket" },
      message: "scheme, host and port only",
    },
    { what: "a two-letter bucket", over: { bucket: "ab" }, message: "s3 bucket must be" },
    { what: "an upper-case bucket", over: { bucket: "My-Bucket" }, message: "s3 bucket must be" },
    { what: "a bucket with two dots in a row", over: { bucket: "a..b" }, message: "s3 bucket must be" },
    { what: "a bucket shaped like an IP address", over: { bucket: "192.168.1.1" }, message: "s3 bucket must be" },
    { what: "a bucket starting with a hyphen", over: { bucket: "-abc" }, message: "s3 bucket must be" },
    { what: "a region with spaces", over: { region: "EU WEST" }, message: "s3 region" },
    { what: "a prefix with ..", over: { prefix: "a/../b" }, message: "s3 prefix" },
    { what: "a prefix with a space", over: { prefix: "a b" }, message: "s3 prefix" },
    { what: "an empty access key", over: { accessKey: "" }, message: "s3 access_key is required" },
    { what: "an empty secret key", over: { secretKey: "" }, message: "s3 secret_key is required" },
  ])("refuses $what", ({ over, message }) => {
    let err: unknown;
    try {
      parseS3Config({ ...good, ...over });
    } catch (e) {
      err = e;
    }
    expect((err as { status: number }).status).toBe(400);
    expect((err as Error).message).toContain(message);
    expect((err as Error).message).not.toContain("shh");
  });
});
