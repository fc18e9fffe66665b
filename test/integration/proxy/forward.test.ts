/** The proxy handler behind Bun.serve + fetch (the TLS listeners' front); the cases are in forward-suite.ts. */
import { forwardSuite } from "./forward-suite";

forwardSuite("serve");
