/** Every table, for drizzle and drizzle-kit. */
export * from "./activity";
export * from "./auth";
export * from "./settings";
