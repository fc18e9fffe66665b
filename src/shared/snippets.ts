/** Service snippets on the wire (GET /api/snippets, GET /api/snippets/{id}): services the compose editor inserts. */
import type { TemplateVariable } from "./templates";

/** One entry of GET /api/snippets. */
export interface SnippetSummary {
  id: string;
  name: string;
  description: string;
  category: string;
  /** An SVG image, inline. */
  icon: string;
  /** Services of its compose fragment, the main one first. */
  services: string[];
  /** Named volumes of its compose fragment. */
  volumes: string[];
  /** The keys its fragment reads as `${KEY}`: the app's .env must hold them. */
  variables: TemplateVariable[];
}

/** GET /api/snippets/{id}. */
export interface SnippetDetail extends SnippetSummary {
  /** The fragment: `services:` and `volumes:`, reading `${KEY}` for each variable. */
  compose: string;
  notes: string;
  /**
   * With `?generate=true`: a value for each variable to add to the app's .env, secrets freshly generated
   * (crypto.getRandomValues, at least 128 bits), the others their default ("" when they have none).
   */
  env?: Record<string, string>;
}
