/** `sundeck upgrade`: being built this session (issue 15); until then it says so and fails. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "upgrade", description: "Not available in this build yet" },
  run() {
    throw new Error("sundeck upgrade is not available in this build yet");
  },
});
