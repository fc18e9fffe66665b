/** Key derivation, sealed values that refuse any tampering or wrong key, HMAC, constant-time equality, random hex. */
import { describe, expect, it } from "bun:test";
import { createSecrets, decrypt, deriveKeys, encrypt, hmacHex, randomHex, safeEqual } from "../../../src/lib/crypto";

const SECRET = "correct horse battery staple 42";
const keys = deriveKeys(SECRET);

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

/** The raw iv | ciphertext | tag bytes of a sealed value. */
const rawOf = (sealed: string) => Buffer.from(sealed.slice("v1:".length), "base64");
const seal = (raw: Buffer) => `v1:${raw.toString("base64")}`;

describe("deriveKeys", () => {
  it("derives the same keys from the same secret", () => {
    const again = deriveKeys(SECRET);
    expect(hex(again.encryption)).toBe(hex(keys.encryption));
    expect(hex(again.session)).toBe(hex(keys.session));
    expect(hex(again.apiKey)).toBe(hex(keys.apiKey));
  });

  it("derives different keys from a different secret", () => {
    const other = deriveKeys(`${SECRET}!`);
    expect(hex(other.encryption)).not.toBe(hex(keys.encryption));
    expect(hex(other.session)).not.toBe(hex(keys.session));
    expect(hex(other.apiKey)).not.toBe(hex(keys.apiKey));
  });

  it("derives a different 32-byte key for each purpose", () => {
    const all = [keys.encryption, keys.session, keys.apiKey].map(hex);
    expect(new Set(all).size).toBe(3);
    for (const k of [keys.encryption, keys.session, keys.apiKey]) expect(k).toHaveLength(32);
  });

  it("never uses the secret itself as a key", () => {
    const secretHex = Buffer.from(SECRET).toString("hex");
    for (const k of [keys.encryption, keys.session, keys.apiKey]) expect(hex(k)).not.toContain(secretHex.slice(0, 16));
  });

  it("returns a frozen set of keys", () => {
    expect(Object.isFrozen(keys)).toBe(true);
  });
});

describe("encrypt and decrypt", () => {
  it("round-trips a credential", () => {
    expect(decrypt(keys.encryption, encrypt(keys.encryption, "hunter2-registry-token"))).toBe("hunter2-registry-token");
  });

  it("round-trips unicode text", () => {
    const text = "pässwörd · 密码 · 🔑🚀";
    expect(decrypt(keys.encryption, encrypt(keys.encryption, text))).toBe(text);
  });

  it("round-trips the empty string", () => {
    expect(decrypt(keys.encryption, encrypt(keys.encryption, ""))).toBe("");
  });

  it("round-trips a long value", () => {
    const text = "x".repeat(100_000);
    expect(decrypt(keys.encryption, encrypt(keys.encryption, text))).toBe(text);
  });

  it("writes the versioned v1: base64 format without the plaintext", () => {
    const sealed = encrypt(keys.encryption, "plain-secret-value");
    expect(sealed).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain("plain-secret-value");
    // 12-byte iv + ciphertext (same length as the plaintext) + 16-byte tag
    expect(rawOf(sealed)).toHaveLength(12 + "plain-secret-value".length + 16);
  });

  it("uses a fresh IV so encrypting the same text twice differs", () => {
    const a = encrypt(keys.encryption, "same");
    const b = encrypt(keys.encryption, "same");
    expect(a).not.toBe(b);
    expect(hex(rawOf(a).subarray(0, 12))).not.toBe(hex(rawOf(b).subarray(0, 12)));
    expect(decrypt(keys.encryption, a)).toBe("same");
    expect(decrypt(keys.encryption, b)).toBe("same");
  });

  it("refuses a value with any single byte changed (iv, ciphertext or tag)", () => {
    const sealed = encrypt(keys.encryption, "tamper-me");
    const raw = rawOf(sealed);
    for (let i = 0; i < raw.length; i++) {
      const bad = Buffer.from(raw);
      bad[i] ^= 0x01;
      expect(() => decrypt(keys.encryption, seal(bad))).toThrow();
    }
  });

  it("refuses a truncated value", () => {
    const raw = rawOf(encrypt(keys.encryption, "tamper-me"));
    expect(() => decrypt(keys.encryption, seal(raw.subarray(0, raw.length - 1)))).toThrow();
    expect(() => decrypt(keys.encryption, seal(raw.subarray(0, 27)))).toThrow();
    expect(() => decrypt(keys.encryption, seal(raw.subarray(1)))).toThrow();
  });

  it("refuses a value with bytes appended", () => {
    const raw = rawOf(encrypt(keys.encryption, "tamper-me"));
    expect(() => decrypt(keys.encryption, seal(Buffer.concat([raw, Buffer.from([0])])))).toThrow();
  });

  it("refuses a value made under another key", () => {
    const sealed = encrypt(deriveKeys("another secret entirely").encryption, "x");
    expect(() => decrypt(keys.encryption, sealed)).toThrow();
  });

  it("refuses a value encrypted with a non-encryption key of the same secret", () => {
    const sealed = encrypt(keys.apiKey, "x");
    expect(() => decrypt(keys.encryption, sealed)).toThrow();
  });

  it.each([
    ["no version", "AAAA"],
    ["an unknown version", `v2:${rawOf(encrypt(keys.encryption, "x")).toString("base64")}`],
    ["an empty body", "v1:"],
    ["the empty string", ""],
    ["plaintext", "hunter2"],
  ])("refuses %s", (_what, sealed) => {
    expect(() => decrypt(keys.encryption, sealed)).toThrow();
  });

  it("refuses a sealed value with extra text after another colon", () => {
    const sealed = encrypt(keys.encryption, "x");
    expect(() => decrypt(keys.encryption, `${sealed}:extra`)).toThrow();
  });

  it("refuses a sealed value whose body holds characters outside base64", () => {
    const sealed = encrypt(keys.encryption, "x");
    expect(() => decrypt(keys.encryption, `${sealed.slice(0, 6)}!${sealed.slice(6)}`)).toThrow();
  });
});

describe("hmacHex", () => {
  it("is deterministic per key and value and differs across keys and values", () => {
    expect(hmacHex(keys.apiKey, "sd_abc")).toBe(hmacHex(keys.apiKey, "sd_abc"));
    expect(hmacHex(keys.apiKey, "sd_abc")).not.toBe(hmacHex(keys.apiKey, "sd_abd"));
    expect(hmacHex(keys.apiKey, "sd_abc")).not.toBe(hmacHex(keys.encryption, "sd_abc"));
    expect(hmacHex(keys.apiKey, "sd_abc")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("matches the RFC 4231 test case 2 for HMAC-SHA256", () => {
    expect(hmacHex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });
});

describe("safeEqual", () => {
  it("is true for equal strings", () => {
    expect(safeEqual("abc123", "abc123")).toBe(true);
    expect(safeEqual("", "")).toBe(true);
    expect(safeEqual("ключ", "ключ")).toBe(true);
  });

  it("is false for strings that differ in content", () => {
    expect(safeEqual("abc123", "abc124")).toBe(false);
    expect(safeEqual("abc123", "Abc123")).toBe(false);
  });

  it("is false for strings of different lengths, including prefixes", () => {
    expect(safeEqual("abc", "abcd")).toBe(false);
    expect(safeEqual("abcd", "abc")).toBe(false);
    expect(safeEqual("", "a")).toBe(false);
  });
});

describe("randomHex", () => {
  it("gives n random bytes as lowercase hex", () => {
    expect(randomHex(32)).toMatch(/^[0-9a-f]{64}$/);
    expect(randomHex(32)).not.toBe(randomHex(32));
  });
});

describe("createSecrets", () => {
  it("seals under its key and opens only what that key sealed", () => {
    const a = createSecrets(deriveKeys("secret-number-one-0123").encryption);
    const b = createSecrets(deriveKeys("secret-number-two-0123").encryption);
    const sealed = a.seal("registry-password");
    expect(sealed).not.toContain("registry-password");
    expect(a.open(sealed)).toBe("registry-password");
    expect(() => b.open(sealed)).toThrow();
  });
});
