/**
 * Request schemas of the template routes: a render's body, and a deploy's (the render's plus the reviewed compose and
 * .env texts). Values are checked further by variables.ts, routing.ts and batteries.ts, each a 400 naming the field.
 */
import { t } from "elysia";

const fields = {
  slug: t.String(),
  variables: t.Optional(t.Record(t.String(), t.Unknown())),
  routing: t.Optional(
    t.Object({ mode: t.String(), domain: t.Optional(t.String()), tls: t.Optional(t.String()) }, { additionalProperties: false }),
  ),
  batteries: t.Optional(
    t.Object(
      {
        backup: t.Optional(t.Boolean({ description: "a daily backup config of the template's database (local, keep 7)" })),
        alert: t.Optional(t.Boolean({ description: "an app_down alert rule of the app" })),
      },
      { additionalProperties: false, error: "batteries must be {backup?: boolean, alert?: boolean}" },
    ),
  ),
};

/** POST /api/templates/{id}/render */
export const RenderBody = t.Object(fields);

/** POST /api/templates/{id}/deploy: `compose` and `env`, when given, are deployed instead of the rendered texts. */
export const DeployBody = t.Object({
  ...fields,
  compose: t.Optional(t.String({ minLength: 1, description: "the reviewed compose text, deployed instead of the render" })),
  env: t.Optional(t.String({ description: "the reviewed .env text, deployed instead of the render" })),
});

export type RenderInput = typeof RenderBody.static;
export type DeployInput = typeof DeployBody.static;
