/** Templates on the wire (GET /api/templates, GET /api/templates/{id}, POST /api/templates/{id}/deploy). */

export const VARIABLE_TYPES = ["text", "secret", "domain", "email", "number"] as const;
export type VariableType = (typeof VARIABLE_TYPES)[number];

export const SECRET_CHARSETS = ["hex", "alphanum", "base58"] as const;
export type SecretCharset = (typeof SECRET_CHARSETS)[number];

export interface TemplateVariable {
  key: string;
  label: string;
  type: VariableType;
  required: boolean;
  default: string | null;
  help: string | null;
  /** How a secret left empty is made (server-side, crypto.getRandomValues). */
  generate?: { length: number; charset: SecretCharset };
}

/** One entry of GET /api/templates. */
export interface TemplateSummary {
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string[];
  /** Services of its compose file. */
  services: string[];
  variables: TemplateVariable[];
  /** Raised when the template changes; an app remembers the one it was made from. */
  version: number;
  /** An SVG image, inline. */
  icon: string;
  /** The service and port a route reaches (quick test and domain routing), null when it serves no web page. */
  web: { service: string; port: number } | null;
}

/** GET /api/templates/{id}. */
export interface TemplateDetail extends TemplateSummary {
  compose: string;
  notes: string;
}

export const ROUTING_MODES = ["quick", "domain", "none"] as const;
export type RoutingMode = (typeof ROUTING_MODES)[number];

/** POST /api/templates/{id}/deploy. */
export interface TemplateDeployBody {
  slug: string;
  variables?: Record<string, string>;
  routing?: { mode: RoutingMode; domain?: string; tls?: string };
}
