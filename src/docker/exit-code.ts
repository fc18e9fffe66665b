/** Reading the Engine API's container status text ("Exited (137) 2 seconds ago"). */

/** Exit code from a status like "Exited (137) 2 seconds ago", or null while the container has not exited. */
export function exitCode(status: string): number | null {
  const m = /^Exited \((-?\d+)\)/.exec(status);
  return m ? Number(m[1]) : null;
}
