/** `sundeck version` */
import { defineCommand } from "citty";
import { COMMIT, VERSION } from "../version";

export default defineCommand({
  meta: { name: "version", description: "Print the version" },
  run() {
    process.stdout.write(`sundeck ${VERSION} (${COMMIT})\n`);
  },
});
