/** Catching the error a call is expected to throw, for tests that look at its status and reason. */

/** The error `fn` throws when it is a `type`; any other error is rethrown, and returning normally fails the test. */
export function thrown<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    if (e instanceof type) return e;
    throw e;
  }
  throw new Error("expected an error, the call returned");
}
