/** Wire shapes of API keys (snake_case, as sent). The key itself appears only in the answer that creates it. */

/** An entry of GET /api/apikeys (`username` only in the super-admin's `?all=true` listing). */
export interface ApiKey {
  id: number;
  name: string;
  /** The key's first characters, to recognise it by. */
  prefix: string;
  username?: string;
  created_at: string;
  expires_at: string | null;
  last_used_at: string | null;
}

/** 201 of POST /api/apikeys: the only time the key is sent. */
export interface CreatedApiKey extends ApiKey {
  key: string;
}
