/**
 * Backup targets: where archives are stored. `createTarget` turns a config's target (secret already unsealed) into a
 * {@link Target}; the local and S3 factories and the key rules are exported for the runner and the tests.
 */
import type { BackupTarget } from "../../../shared/backups";
import type { Target } from "../types";
import { createLocalTarget } from "./local";
import { createS3Target, type S3TargetOptions } from "./s3";
import { parseS3Config } from "./s3-config";

export { checkKey, keySegment, TargetError } from "./keys";
export { createLocalTarget, type LocalTarget, type LocalTargetOptions } from "./local";
export { createS3Target, type S3Target, type S3TargetOptions } from "./s3";
export { normalisePrefix, parseS3Config, type S3TargetConfig } from "./s3-config";

/** The target a config names: local archives under `localDir` (`<data_dir>/backups`), or its S3 bucket. */
export function createTarget(spec: BackupTarget, deps: { localDir: string; s3?: S3TargetOptions }): Target {
  if (spec.kind === "local") return createLocalTarget({ dir: deps.localDir });
  const config = parseS3Config({
    endpoint: spec.endpoint,
    bucket: spec.bucket,
    prefix: spec.prefix,
    region: spec.region,
    accessKey: spec.access_key,
    secretKey: spec.secret_key,
    pathStyle: spec.path_style ?? true,
  });
  return createS3Target(config, deps.s3);
}
