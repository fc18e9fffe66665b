/** Headers lose hop-by-hop fields both ways; the app gets X-Forwarded-* from the connection, the client HSTS. */
import { describe, expect, it } from "bun:test";
import {
  forwardedFor,
  HSTS_VALUE,
  responseHeaderPairs,
  type UpstreamHeaderOptions,
  upstreamHeaderPairs,
} from "../../../src/proxy/headers";

/** The upstream header pairs, looked at through Headers. */
const upstreamHeaders = (incoming: Headers, o: UpstreamHeaderOptions) => new Headers(upstreamHeaderPairs(incoming, o));

const base = {
  clientIp: "203.0.113.7",
  secure: false,
  host: "app.example.com",
  trustForwarded: false,
  proxyToken: null,
  bodyless: false,
};

describe("request headers toward the upstream", () => {
  it("removes hop-by-hop headers and any named in Connection", () => {
    const h = upstreamHeaders(
      new Headers({
        connection: "keep-alive, X-Custom-Hop",
        "keep-alive": "timeout=5",
        "proxy-authorization": "Basic x",
        "proxy-connection": "keep-alive",
        "proxy-foo": "1",
        te: "trailers",
        trailer: "x",
        "transfer-encoding": "chunked",
        upgrade: "h2c",
        "x-custom-hop": "1",
        "x-keep": "yes",
        cookie: "a=1",
        authorization: "Bearer t",
      }),
      base,
    );
    for (const name of [
      "connection",
      "keep-alive",
      "proxy-authorization",
      "proxy-connection",
      "proxy-foo",
      "te",
      "trailer",
      "transfer-encoding",
      "upgrade",
      "x-custom-hop",
    ]) {
      expect(h.has(name)).toBe(false);
    }
    expect(h.get("x-keep")).toBe("yes");
    expect(h.get("cookie")).toBe("a=1");
    expect(h.get("authorization")).toBe("Bearer t");
  });

  it("keeps Host and sets X-Forwarded-* from the connection, replacing what an untrusted client sent", () => {
    const h = upstreamHeaders(
      new Headers({
        host: "app.example.com",
        "x-forwarded-for": "1.1.1.1",
        "x-forwarded-proto": "https",
        "x-forwarded-host": "evil.example",
        forwarded: "for=1.1.1.1",
        "x-real-ip": "1.1.1.1",
        "x-sundeck-proxy": "stolen",
      }),
      base,
    );
    expect(h.get("host")).toBe("app.example.com");
    expect(h.get("x-forwarded-for")).toBe("203.0.113.7");
    expect(h.get("x-forwarded-proto")).toBe("http");
    expect(h.get("x-forwarded-host")).toBe("app.example.com");
    expect(h.get("x-real-ip")).toBe("203.0.113.7");
    expect(h.has("forwarded")).toBe(false);
    expect(h.has("x-sundeck-proxy")).toBe(false);
  });

  it("says https for TLS requests and adds the token only when asked (management route)", () => {
    const h = upstreamHeaders(new Headers({ "x-sundeck-proxy": "stolen" }), { ...base, secure: true, proxyToken: "tok" });
    expect(h.get("x-forwarded-proto")).toBe("https");
    expect(h.get("x-sundeck-proxy")).toBe("tok");
  });

  it("keeps a trusted proxy's forwarded headers", () => {
    const h = upstreamHeaders(
      new Headers({
        "x-forwarded-for": "198.51.100.1, 203.0.113.7",
        "x-forwarded-proto": "https",
        "x-forwarded-host": "front.example",
        forwarded: "for=x",
      }),
      { ...base, trustForwarded: true },
    );
    expect(h.get("x-forwarded-for")).toBe("198.51.100.1, 203.0.113.7");
    expect(h.get("x-forwarded-proto")).toBe("https");
    expect(h.get("x-forwarded-host")).toBe("front.example");
    expect(h.get("forwarded")).toBe("for=x");
  });

  it("never passes framing on (the engine writes its own), and Expect only with a body", () => {
    const framing = { "content-length": "7", "transfer-encoding": "chunked", expect: "100-continue" };
    const h = upstreamHeaders(new Headers(framing), { ...base, bodyless: true });
    expect(h.has("content-length")).toBe(false);
    expect(h.has("transfer-encoding")).toBe(false);
    expect(h.has("expect")).toBe(false);
    const withBody = upstreamHeaders(new Headers(framing), base);
    expect(withBody.has("content-length")).toBe(false);
    expect(withBody.has("transfer-encoding")).toBe(false);
    expect(withBody.get("expect")).toBe("100-continue");
  });

  it("lets Connection name end-to-end headers away, never the ones the proxy sets", () => {
    const h = upstreamHeaders(
      new Headers({ connection: "host, x-forwarded-for, x-real-ip, cookie", cookie: "a=1", "x-real-ip": "6.6.6.6" }),
      base,
    );
    expect(h.has("cookie")).toBe(false);
    expect(h.get("host")).toBe(base.host);
    expect(h.get("x-forwarded-for")).toBe(base.clientIp);
    expect(h.get("x-real-ip")).toBe(base.clientIp);
  });

  it("passes the WebSocket handshake on and asks for the upgrade", () => {
    const h = upstreamHeaders(
      new Headers({
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-key": "k",
        "sec-websocket-version": "13",
        "sec-websocket-protocol": "chat",
        origin: "https://app.example.com",
      }),
      { ...base, bodyless: true, upgrade: true },
    );
    expect(h.get("sec-websocket-key")).toBe("k");
    expect(h.get("sec-websocket-protocol")).toBe("chat");
    expect(h.get("origin")).toBe("https://app.example.com");
    expect(h.get("connection")).toBe("upgrade");
    expect(h.get("upgrade")).toBe("websocket");
    const plain = upstreamHeaders(new Headers({ connection: "Upgrade", upgrade: "websocket" }), base);
    expect(plain.has("connection")).toBe(false);
    expect(plain.has("upgrade")).toBe(false);
  });
});

describe("X-Forwarded-For chain", () => {
  it("starts afresh from an untrusted peer", () => expect(forwardedFor("6.6.6.6", "1.2.3.4", false)).toBe("1.2.3.4"));
  it("keeps a trusted chain up to the client", () => {
    expect(forwardedFor("1.2.3.4", "1.2.3.4", true)).toBe("1.2.3.4");
    expect(forwardedFor("9.9.9.9, 1.2.3.4, 10.0.0.2", "1.2.3.4", true)).toBe("9.9.9.9, 1.2.3.4");
  });
  it("appends the client when the trusted chain does not name it", () => {
    expect(forwardedFor("9.9.9.9", "1.2.3.4", true)).toBe("9.9.9.9, 1.2.3.4");
    expect(forwardedFor(null, "1.2.3.4", true)).toBe("1.2.3.4");
  });
});

describe("response headers toward the client", () => {
  /** The client header pairs, looked at through Headers. */
  const toClient = (h: Headers, hsts: boolean, keepUpgrade = false) => {
    const out = new Headers();
    for (const [k, v] of responseHeaderPairs(h, hsts, keepUpgrade)) out.append(k, v);
    return out;
  };

  it("removes hop-by-hop headers, keeps Set-Cookie multiples and Location", () => {
    const h = new Headers({
      connection: "close, x-hop",
      "keep-alive": "timeout=5",
      "x-hop": "1",
      "transfer-encoding": "chunked",
      upgrade: "h2",
      location: "/next?a=1",
    });
    h.append("set-cookie", "a=1; Path=/");
    h.append("set-cookie", "b=2; Path=/");
    const out = toClient(h, false);
    for (const name of ["connection", "keep-alive", "x-hop", "transfer-encoding", "upgrade"]) expect(out.has(name)).toBe(false);
    expect(out.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    expect(out.get("location")).toBe("/next?a=1");
    expect(out.has("strict-transport-security")).toBe(false);
  });

  it("adds HSTS when asked, unless the upstream set its own", () => {
    expect(toClient(new Headers(), true).get("strict-transport-security")).toBe(HSTS_VALUE);
    const own = new Headers({ "strict-transport-security": "max-age=10" });
    expect(toClient(own, true).get("strict-transport-security")).toBe("max-age=10");
  });

  it("keeps a 101's Connection and Upgrade", () => {
    const out = toClient(new Headers({ connection: "Upgrade", upgrade: "websocket", "sec-websocket-accept": "a" }), true, true);
    expect(out.get("upgrade")).toBe("websocket");
    expect(out.get("connection")).toBe("Upgrade");
    expect(out.get("sec-websocket-accept")).toBe("a");
  });
});
