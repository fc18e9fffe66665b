/** The forward suite (forward-suite.ts) with clients on a plain listener. */
import { forwardSuite } from "./forward-suite";

forwardSuite("plain");
