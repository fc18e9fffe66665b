/** The proxy handler behind the raw HTTP/1.1 engine (the plain listeners' front); the cases are in forward-suite.ts. */
import { forwardSuite } from "./forward-suite";

forwardSuite("raw");
