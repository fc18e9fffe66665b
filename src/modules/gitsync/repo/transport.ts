/** The network half of a repository: what HTTP(S) and SSH remotes both offer. Local work stays in isomorphic-git. */
import type { Fetched } from "./fetch-pack";
import type { Deadline } from "./limits";

/** One ref the remote advertises. */
export interface RemoteRef {
  ref: string;
  oid: string;
}

/** Talks to the remote `origin` of one repository. */
export interface Transport {
  /** Every branch and tag the remote advertises (HEAD and peeled tags left out). */
  /** The first refs the remote lists (see MAX_KEPT_REFS), `want` always among them when it exists. */
  listRefs(want?: string): Promise<RemoteRef[]>;
  /**
   * Fetch `branch` into `refs/remotes/origin/<branch>`, every object bounded (limits.ts): its tip (null when the
   * remote has no such branch) and the objects skipped. Within `deadline` when given.
   */
  fetch(branch: string, deadline?: Deadline): Promise<Fetched>;
  /** Push the local `branch` to the remote branch of the same name; never forced. */
  push(branch: string, deadline?: Deadline): Promise<void>;
}

/** Credentials and policy for the remote. Secrets here never reach .git/config, errors or logs. */
export type RemoteAuth =
  | { kind: "none" }
  | { kind: "token"; username?: string; token: string }
  | {
      kind: "ssh";
      /** Private key file; empty uses the system default (ssh-agent, ~/.ssh). */
      keyPath?: string;
      /** Where host keys are pinned at first contact (accept-new), e.g. `<data_dir>/git/known_hosts`. */
      knownHostsPath: string;
    };

/** Time limit of one network operation unless the caller sets another. */
export const DEFAULT_TIMEOUT_MS = 120_000;
