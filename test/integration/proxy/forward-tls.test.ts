/** The forward suite (forward-suite.ts) with clients on the real TLS listener. */
import { forwardSuite } from "./forward-suite";

forwardSuite("tls");
