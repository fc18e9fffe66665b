/**
 * What each kind of receiver is sent, built as objects in the format the receiver documents: generic gets the
 * AlertNotification itself (signed when a secret is set), Slack an incoming-webhook message (`text` fallback plus
 * Block Kit blocks), Discord an execute-webhook body (`content` plus one embed, mentions disabled). Texts are cut to
 * each format's documented limits; Slack's markup characters are escaped so an app name cannot ping a channel.
 */
import type { AlertNotification } from "../../shared/alerts";
import type { WebhookKind } from "../../shared/webhooks";
import { signatureHeaders } from "./signing";

/** Cut `s` to `max` characters (an ellipsis marks the cut). */
const cut = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** Slack treats &, < and > as markup (`<!channel>` notifies everyone). */
const slackEscape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const TITLES: Record<AlertNotification["state"], string> = { firing: "Firing", resolved: "Resolved", test: "Test" };

/** The one-line headline every kind shows: state, rule and app. */
export function headline(n: AlertNotification): string {
  const what = n.rule ? n.rule.name : "Sundeck test notification";
  return `[${TITLES[n.state]}] ${what}${n.app_slug ? ` (${n.app_slug})` : ""}`;
}

/** Label and value pairs shown as fields by Slack and Discord. */
function facts(n: AlertNotification): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (n.app_slug) out.push(["App", n.app_slug]);
  if (n.rule) {
    out.push(["Rule", n.rule.name], ["Kind", n.rule.kind], ["Threshold", String(n.rule.threshold)]);
    if (n.rule.duration) out.push(["For", n.rule.duration]);
  }
  if (n.value !== null) out.push(["Value", String(Math.round(n.value * 100) / 100)]);
  out.push(["State", n.state]);
  return out;
}

/** A Slack incoming-webhook message. */
export function slackMessage(n: AlertNotification) {
  const title = headline(n);
  return {
    // the fallback text is markup too, and it is what notifications read: `<!channel>` in it would ping everyone
    text: cut(slackEscape(`${title}: ${n.message}`), 3000),
    blocks: [
      { type: "header", text: { type: "plain_text", text: cut(title, 150), emoji: true } },
      { type: "section", text: { type: "mrkdwn", text: cut(slackEscape(n.message || title), 3000) } },
      {
        type: "section",
        fields: facts(n)
          .slice(0, 10)
          .map(([k, v]) => ({ type: "mrkdwn", text: cut(`*${k}*\n${slackEscape(v)}`, 2000) })),
      },
      { type: "context", elements: [{ type: "mrkdwn", text: `Sundeck · ${slackEscape(n.created_at)}` }] },
    ],
  };
}

/** Embed colours: red firing, green resolved, blue test. */
const COLORS: Record<AlertNotification["state"], number> = { firing: 0xd93f0b, resolved: 0x2da44e, test: 0x1f6feb };

/** A Discord execute-webhook body. */
export function discordMessage(n: AlertNotification) {
  const title = headline(n);
  return {
    content: cut(title, 2000),
    // alert text must not notify @everyone or anyone else
    allowed_mentions: { parse: [] as string[] },
    embeds: [
      {
        title: cut(title, 256),
        description: cut(n.message || title, 4096),
        color: COLORS[n.state],
        fields: facts(n)
          .slice(0, 25)
          .map(([name, value]) => ({ name: cut(name, 256), value: cut(value, 1024), inline: true })),
        timestamp: n.created_at,
        footer: { text: "Sundeck" },
      },
    ],
  };
}

/** The body and extra headers of a delivery of `n` to a receiver of `kind`, signed at `nowMs` when `secret` is set. */
export function render(
  kind: WebhookKind,
  n: AlertNotification,
  secret: string | null,
  nowMs: number,
): { body: string; headers: Record<string, string> } {
  if (kind === "slack") return { body: JSON.stringify(slackMessage(n)), headers: {} };
  if (kind === "discord") return { body: JSON.stringify(discordMessage(n)), headers: {} };
  const body = JSON.stringify({
    event: n.event,
    rule: n.rule,
    app_slug: n.app_slug,
    state: n.state,
    value: n.value,
    message: n.message,
    created_at: n.created_at,
  } satisfies AlertNotification);
  return { body, headers: secret ? signatureHeaders(secret, body, nowMs) : {} };
}

/** The notification POST /api/webhooks/test sends. */
export function testNotification(createdAt: string): AlertNotification {
  return {
    event: "test",
    rule: null,
    app_slug: null,
    state: "test",
    value: null,
    message: "This is a test notification from Sundeck: this destination is reachable.",
    created_at: createdAt,
  };
}
