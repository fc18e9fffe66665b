/**
 * Rewriting routing labels for PUT /api/apps/{slug}/endpoints: map and list labels, one and several endpoints, removal,
 * everything else of the file (comments, other labels, values, `$`, layout) as written, and the label parser reading
 * back exactly what was asked.
 */
import { describe, expect, it } from "bun:test";
import {
  type EndpointEntry,
  entriesOf,
  layoutOf,
  rewriteProblem,
  sameEntries,
  writeEndpointLabels,
} from "../../../src/compose/endpoint-labels";
import { parseAppLabels } from "../../../src/compose/labels";
import { ComposeError } from "../../../src/compose/model";
import { parseCompose } from "../../../src/compose/parse";
import { thrown } from "../../helpers/thrown";

const ep = (service: string, domain: string, port = 8080, path = "/", tls: EndpointEntry["tls"] = null): EndpointEntry => ({
  service,
  domain,
  port,
  path,
  tls,
});

/** The endpoints the real label parser reads from the text, one entry per host. */
const readBack = (text: string, env: Record<string, string> = {}) => entriesOf(parseAppLabels(parseCompose(text, env)).endpoints);

/** Rewrite, and hold the result to the parser: it reads back the entries, and nothing else of the file changed. */
function rewrite(text: string, entries: EndpointEntry[], env: Record<string, string> = {}): string {
  const out = writeEndpointLabels(text, entries);
  expect(sameEntries(readBack(out, env), entries)).toBe(true);
  expect(rewriteProblem(parseCompose(text, env), parseCompose(out, env), entries)).toBeNull();
  return out;
}

const MAP = `# the blog
services:
  web:
    image: sundeck-test/web:latest # pinned
    command: ["sh", "-c", "echo $$HOME \${GREETING:-hi}"]
    user: "1000"
    labels:
      # routing
      sundeck.domain: blog.example.com
      sundeck.port: "8080"
      sundeck.ratelimit.requests: "100"
      sundeck.access.allow: 10.0.0.0/8
      com.example.note: costs $$5

  db:
    image: postgres:16
    labels:
      sundeck.backup.strategy: postgres
`;

describe("writeEndpointLabels: labels as a map", () => {
  it("replaces the routing labels where they stood and leaves the rest of the file as written", () => {
    const out = rewrite(MAP, [ep("web", "news.example.com", 8080, "/", "local")]);
    expect(out).toBe(
      MAP.replace("sundeck.domain: blog.example.com", "sundeck.domain: news.example.com").replace(
        'sundeck.port: "8080"\n',
        'sundeck.port: "8080"\n      sundeck.tls: local\n',
      ),
    );
  });

  it("gives the same text back when it is asked for the endpoints the file already has", () => {
    expect(writeEndpointLabels(MAP, readBack(MAP))).toBe(MAP);
  });

  it("writes several endpoints of one service as sundeck.endpoints.<n>.*", () => {
    const entries = [ep("web", "blog.example.com"), ep("web", "*.blog.example.com", 9000, "/api", "off")];
    const out = rewrite(MAP, entries);
    expect(out).toContain(
      [
        "      # routing",
        "      sundeck.endpoints.1.domain: blog.example.com",
        '      sundeck.endpoints.1.port: "8080"',
        '      sundeck.endpoints.2.domain: "*.blog.example.com"',
        '      sundeck.endpoints.2.port: "9000"',
        '      sundeck.endpoints.2.path: "/api"',
        '      sundeck.endpoints.2.tls: "off"',
        '      sundeck.ratelimit.requests: "100"',
      ].join("\n"),
    );
    expect(out).not.toContain("sundeck.domain");
  });

  it("adds labels to a service that has none, and spreads endpoints over services", () => {
    const out = rewrite(MAP, [ep("web", "blog.example.com"), ep("db", "db.example.com", 5432)]);
    expect(out).toContain(
      '    labels:\n      sundeck.backup.strategy: postgres\n      sundeck.domain: db.example.com\n      sundeck.port: "5432"\n',
    );
    const bare = "services:\n  web:\n    image: x\n  api:\n    image: y\n    labels:\n";
    expect(rewrite(bare, [ep("web", "a.example.com"), ep("api", "b.example.com", 80)])).toBe(
      'services:\n  web:\n    image: x\n    labels:\n      sundeck.domain: a.example.com\n      sundeck.port: "8080"\n' +
        '  api:\n    image: y\n    labels:\n      sundeck.domain: b.example.com\n      sundeck.port: "80"\n',
    );
  });

  it("removes every routing label for an empty list, and a labels key that held nothing else", () => {
    const text = `services:
  web:
    image: x
    labels:
      sundeck.endpoints.api.domain: api.example.com
      sundeck.endpoints.api.port: "80"
      sundeck.endpoints.admin.domain: example.com
      sundeck.endpoints.admin.path: /admin
      sundeck.endpoints.admin.port: "9000"
    restart: always
  worker:
    image: y
    labels:
      sundeck.scalable: "true"
      sundeck.domain: w.example.com
      sundeck.port: "80"
`;
    expect(rewrite(text, [])).toBe(`services:
  web:
    image: x
    restart: always
  worker:
    image: y
    labels:
      sundeck.scalable: "true"
`);
  });

  it("turns an empty flow mapping into a block one when it gets labels", () => {
    const text = "services:\n  web:\n    image: x\n    labels: {}\n";
    expect(rewrite(text, [ep("web", "a.example.com")])).toBe(
      'services:\n  web:\n    image: x\n    labels:\n      sundeck.domain: a.example.com\n      sundeck.port: "8080"\n',
    );
  });
});

describe("writeEndpointLabels: labels as a list", () => {
  const LIST = `services:
  web:
    image: x
    labels:
      - "com.example.team=blog"
      - "sundeck.domain=blog.example.com"
      - "sundeck.port=8080"
      - "com.example.price=$$5 or \${PRICE}"
`;

  it("keeps the list form and its quoting, the new items where the old ones stood", () => {
    const out = rewrite(LIST, [ep("web", "a.example.com", 80), ep("web", "b.example.com", 80, "/b/", "custom")].map(norm));
    expect(out).toBe(`services:
  web:
    image: x
    labels:
      - "com.example.team=blog"
      - "sundeck.endpoints.1.domain=a.example.com"
      - "sundeck.endpoints.1.port=80"
      - "sundeck.endpoints.2.domain=b.example.com"
      - "sundeck.endpoints.2.port=80"
      - "sundeck.endpoints.2.path=/b"
      - "sundeck.endpoints.2.tls=custom"
      - "com.example.price=$$5 or \${PRICE}"
`);
  });

  it("writes plain items in a plain list, and keeps the list when only routing was in it", () => {
    const text = "services:\n  web:\n    image: x\n    labels:\n    - sundeck.domain=old.example.com\n";
    expect(rewrite(text, [ep("web", "new.example.com", 80)])).toBe(
      "services:\n  web:\n    image: x\n    labels:\n    - sundeck.domain=new.example.com\n    - sundeck.port=80\n",
    );
    expect(rewrite(text, [])).toBe("services:\n  web:\n    image: x\n");
  });
});

/** The path as the route normalises it (the parser drops a trailing slash). */
function norm(e: EndpointEntry): EndpointEntry {
  return { ...e, path: e.path.length > 1 ? e.path.replace(/\/$/, "") : e.path };
}

describe("writeEndpointLabels: the rest of the file", () => {
  it("writes every other value back as it stood, whatever type a schema would read into it", () => {
    const text = `services:
  web:
    image: x
    user: 0400
    tty: on
    stop_signal: SIGTERM
    environment:
      HEX: 0x1F
      N: 1.0
      EMPTY:
      TILDE: ~
      PRICE: "$$5"
      REF: \${REF:-a b}
      NOTE: 'it''s'
    command: >
      sh -c 'echo $$PATH'
    labels:
      sundeck.domain: a.example.com
`;
    const out = rewrite(text, [ep("web", "b.example.com", 80)], { REF: "x" });
    expect(out).toBe(text.replace("sundeck.domain: a.example.com", 'sundeck.domain: b.example.com\n      sundeck.port: "80"'));
  });

  it("keeps a file's indentation and its sequences' style", () => {
    const four = `services:
    web:
        image: x
        ports:
            - "8080:80"
        labels:
            sundeck.domain: a.example.com
            sundeck.port: "80"
`;
    expect(layoutOf(four)).toEqual({ indent: 4, indentSeq: true, flowCollectionPadding: false });
    expect(rewrite(four, [ep("web", "b.example.com", 80)])).toBe(four.replace("a.example.com", "b.example.com"));
    // the library writes sequences flush with their key only at an indentation of 2
    const flush = `services:
  web:
    image: x
    ports:
    - "8080:80"
    command: [ "serve", "--port", "80" ]
    labels:
      sundeck.domain: a.example.com
`;
    expect(layoutOf(flush)).toEqual({ indent: 2, indentSeq: false, flowCollectionPadding: true });
    expect(rewrite(flush, [ep("web", "b.example.com", 80)])).toBe(
      flush.replace("sundeck.domain: a.example.com", 'sundeck.domain: b.example.com\n      sundeck.port: "80"'),
    );
    expect(layoutOf(MAP)).toEqual({ indent: 2, indentSeq: true, flowCollectionPadding: false });
  });

  it("keeps CRLF line ends", () => {
    const text = "services:\r\n  web:\r\n    image: x\r\n    labels:\r\n      a: b\r\n";
    expect(rewrite(text, [ep("web", "b.example.com", 80)])).toBe(
      'services:\r\n  web:\r\n    image: x\r\n    labels:\r\n      a: b\r\n      sundeck.domain: b.example.com\r\n      sundeck.port: "80"\r\n',
    );
  });

  it("keeps a comment that stood above the old routing labels", () => {
    const text = `services:
  web:
    image: x
    labels:
      other: x

      # the public name
      sundeck.domain: a.example.com # old
      sundeck.port: "80"
      last: y
`;
    expect(rewrite(text, [ep("web", "b.example.com", 80)])).toBe(
      text.replace("sundeck.domain: a.example.com # old", "sundeck.domain: b.example.com"),
    );
  });
});

describe("writeEndpointLabels: refusals", () => {
  it("names a service the file does not have", () => {
    const e = thrown(() => writeEndpointLabels(MAP, [ep("api", "a.example.com")]), ComposeError);
    expect(e.message).toBe('Bad Request: service "api": no such service');
  });

  it("refuses labels written as an alias, since the edit would reach every service sharing them", () => {
    const text = `x-labels: &common
  sundeck.domain: a.example.com
services:
  web:
    image: x
    labels: *common
`;
    expect(thrown(() => writeEndpointLabels(text, [ep("web", "b.example.com")]), ComposeError).message).toContain(
      "its labels are the YAML alias *common",
    );
  });

  it("finds a rewrite that cannot do what was asked: routing labels from a merge key", () => {
    const text = `x-base: &base
  sundeck.domain: a.example.com
  sundeck.port: "80"
services:
  web:
    image: x
    labels:
      <<: *base
      com.example: "1"
`;
    const asked = [ep("web", "b.example.com", 80)];
    const out = writeEndpointLabels(text, asked);
    expect(rewriteProblem(parseCompose(text, {}), parseCompose(out, {}), asked)).toBeNull();
    const none = writeEndpointLabels(text, []);
    expect(rewriteProblem(parseCompose(text, {}), parseCompose(none, {}), [])).toContain("cannot rewrite");
  });
});
