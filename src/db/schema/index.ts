/** Every table, for drizzle and drizzle-kit. */
export * from "./activity";
export * from "./alerts";
export * from "./apps";
export * from "./auth";
export * from "./backups";
export * from "./metrics";
export * from "./networks";
export * from "./rollouts";
export * from "./settings";
