/**
 * The seams of the backups domain, so its parts are built and tested apart: a strategy turns a container's data into
 * a byte stream and back, a target stores streams under keys, the archive checker vets a restore before anything is
 * extracted. Every byte moves as a stream: an archive is never held whole in memory.
 */
import type { BackupStrategy } from "../../shared/backups";

/** A running container a strategy works on (from the Engine API). */
export interface BackupContainer {
  id: string;
  /** Container name without the leading slash. */
  name: string;
  service: string;
  image: string;
  /** Environment of the container, `KEY=value` (database names and passwords come from here). */
  env: string[];
  /** Mounts: named volumes and bind mounts with their path in the container. */
  mounts: Array<{ type: "volume" | "bind"; name?: string; source: string; destination: string }>;
}

/** Progress and cancellation handed to long operations. */
export interface OpControl {
  signal?: AbortSignal;
  /** Called with the bytes moved so far (throttle inside: at most a few times a second). */
  progress?: (bytes: number) => void;
}

/** What a restore is told besides progress and cancellation. */
export interface RestoreControl extends OpControl {
  /**
   * A volume upload that holds one mount's files at its root (`tar -C DIR -c .`): the destination of the mount the
   * whole archive is extracted into. Unset: Sundeck's own layout, one top-level directory per mount.
   */
  mount?: string;
}

/** One strategy: dump a service's data as a stream, and restore it from one. */
export interface Strategy {
  id: BackupStrategy;
  /** File name extension of its archive, e.g. `.pgdump.gz`, `.tar.gz`. */
  extension: string;
  /** The data as a stream (uncompressed; the runner gzips). Errors surface as a stream error. */
  dump(c: BackupContainer, ctl: OpControl): Promise<ReadableStream<Uint8Array>>;
  /** Restore from an uncompressed stream (already vetted when it is a tar). */
  restore(c: BackupContainer, data: ReadableStream<Uint8Array>, ctl: RestoreControl): Promise<void>;
}

/** What a target wrote: its key, size and sha256 of the stored bytes. */
export interface Stored {
  key: string;
  sizeBytes: number;
  sha256: string;
}

/** A place archives are stored. Writes are atomic: a failed or cancelled put leaves nothing under `key`. */
export interface Target {
  kind: "local" | "s3";
  /** Store the stream under `key`, hashing and counting as it goes. */
  put(key: string, data: ReadableStream<Uint8Array>, ctl: OpControl): Promise<Stored>;
  get(key: string): Promise<ReadableStream<Uint8Array>>;
  delete(key: string): Promise<void>;
  /** A time-limited download URL (s3), or null when the server streams it (local). */
  presign(key: string, expiresInS: number): string | null;
  /** Check the target is usable (write, read back, delete a small probe); throws an error naming what failed. */
  test(): Promise<void>;
}

/**
 * What a run backs up, once resolved: an app service through its strategy, or Sundeck's own database. The runner
 * gzips, hashes and stores what `open` yields; it knows nothing else of the source.
 */
export interface BackupSource {
  /** The strategy id, or `state` for Sundeck's own database. */
  strategy: string;
  extension: string;
  open(ctl: OpControl): Promise<ReadableStream<Uint8Array>>;
}
