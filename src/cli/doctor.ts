/** `sundeck doctor`: being built this session (issue 15); until then it says so and fails. */
import { defineCommand } from "citty";

export default defineCommand({
  meta: { name: "doctor", description: "Not available in this build yet" },
  run() {
    throw new Error("sundeck doctor is not available in this build yet");
  },
});
