/**
 * Interfaces of the Docker layer: the command runner (compose shells out), the compose driver (v2 or v1), and the
 * Engine API client (container state, logs, events: never parsed from compose output).
 */
import type { ExecOptions, ExecProcess } from "./exec";

export type { ExecOptions, ExecProcess };

export interface RunOptions {
  cwd?: string;
  /** The full environment of the child (nothing is inherited implicitly). */
  env?: Record<string, string>;
  /** Each output line as it arrives, trailing newline removed. */
  onLine?: (line: string, stream: "stdout" | "stderr") => void;
  /** Aborting kills the process group (TERM, then KILL after a grace period). */
  signal?: AbortSignal;
  /** Kill after this many ms. */
  timeoutMs?: number;
  /** Bytes written to stdin. */
  stdin?: string;
}

export interface RunResult {
  code: number;
  /** Combined output, the last 64 KiB. */
  output: string;
  /** True when the run was cancelled or timed out. */
  killed: boolean;
}

/** Runs external commands. */
export interface CommandRunner {
  run(argv: string[], opts?: RunOptions): Promise<RunResult>;
}

/** A compose project Sundeck runs. */
export interface ProjectRef {
  /** `sundeck-<slug>` */
  name: string;
  /** The generated compose file to run. */
  file: string;
  /** Directory relative paths resolve against (the app's directory). */
  projectDir: string;
  /** Extra environment for compose (DOCKER_CONFIG for registry auth); merged over a minimal base. */
  env?: Record<string, string>;
  /**
   * Env file compose reads for its own settings and interpolation (`--env-file`). Sundeck passes an empty one: the
   * rendered file is already interpolated, and an app's .env must not steer compose (COMPOSE_*, DOCKER_HOST).
   */
  envFile?: string;
}

export interface ComposeCallOptions {
  onLine?: RunOptions["onLine"];
  signal?: AbortSignal;
}

/** `docker compose` (v2) or `docker-compose` (v1), detected at start. */
export interface ComposeDriver {
  readonly flavor: "v2" | "v1";
  /** The version string compose printed. */
  readonly version: string;
  /**
   * `up -d`; with `noDeps` the services' dependencies are left alone, with `noRecreate` existing containers are kept
   * as they are (a rolling deploy adds new ones beside them by scaling up).
   */
  up(
    p: ProjectRef,
    o?: ComposeCallOptions & { scale?: Record<string, number>; services?: string[]; noDeps?: boolean; noRecreate?: boolean },
  ): Promise<RunResult>;
  pull(p: ProjectRef, services: string[], o?: ComposeCallOptions): Promise<RunResult>;
  down(p: ProjectRef, o?: ComposeCallOptions & { volumes?: boolean }): Promise<RunResult>;
  stop(p: ProjectRef, services?: string[], o?: ComposeCallOptions): Promise<RunResult>;
  start(p: ProjectRef, services?: string[], o?: ComposeCallOptions): Promise<RunResult>;
  restart(p: ProjectRef, services?: string[], o?: ComposeCallOptions): Promise<RunResult>;
}

/** A container as the Engine API lists it, reduced to what Sundeck uses. */
export interface ContainerSummary {
  id: string;
  name: string;
  image: string;
  /** created, running, paused, restarting, removing, exited, dead */
  state: string;
  /** Human status ("Up 3 minutes (healthy)"). */
  status: string;
  /** healthy, unhealthy, starting, or null without a healthcheck. */
  health: string | null;
  labels: Record<string, string>;
  /** com.docker.compose.service */
  service: string | null;
  /** com.docker.compose.project */
  project: string | null;
  /** com.docker.compose.container-number */
  number: number | null;
  /** IP address per network name. */
  networks: Record<string, string>;
  ports: Array<{ privatePort: number; publicPort?: number; ip?: string; type: string }>;
  /** Unix seconds, as Docker reports it. */
  createdAt: number;
}

/** One container log line. */
export interface LogLine {
  /** RFC 3339 timestamp from Docker, when present. */
  ts: string | null;
  stream: "stdout" | "stderr";
  line: string;
  /** The body ended before this line's newline: a line still being written when a read without follow ended. */
  partial?: true;
}

/** A Docker event (container events are what Sundeck follows). */
export interface DockerEvent {
  type: string;
  action: string;
  id: string;
  attributes: Record<string, string>;
  /** Unix seconds, fractional (from Docker's timeNano). */
  time: number;
}

/** A network as the engine lists it. */
export interface EngineNetwork {
  id: string;
  name: string;
  labels: Record<string, string>;
  /** IPAM subnets (IPv4 and IPv6), as the engine reports them. */
  subnets: string[];
}

/** The Engine API over the unix socket. */
export interface Engine {
  /** True when the engine answers. */
  ping(): Promise<boolean>;
  version(): Promise<{ version: string; apiVersion: string }>;
  /** Containers, all states, optionally of one compose project. */
  containers(filter?: { project?: string; labels?: string[] }): Promise<ContainerSummary[]>;
  inspect(id: string): Promise<any>;
  /** One stats reading of a container (`GET /containers/{id}/stats?stream=false&one-shot=true`), the engine's JSON. */
  stats(id: string): Promise<any>;
  /** The engine's `GET /info` (DockerRootDir, cgroup version and driver, ...). */
  info(): Promise<any>;
  /**
   * Log lines of a container; ends when the container stops (follow) or the history is sent, and quietly on abort.
   * `since` is unix seconds (fractional allowed); `tail` lines of history (all when omitted).
   */
  logs(id: string, o: { tail?: number; since?: number; follow?: boolean; signal?: AbortSignal }): AsyncIterable<LogLine>;
  /**
   * Events until aborted (abort ends the iteration without an error). If the engine closes the stream, the iteration
   * throws DockerUnavailable so a follower knows to reconnect. `since` is unix seconds.
   */
  events(o: { filters?: Record<string, string[]>; signal?: AbortSignal; since?: number }): AsyncIterable<DockerEvent>;
  imageExists(ref: string): Promise<boolean>;
  /** The id (`sha256:...`) of a local image, or null when there is none. */
  imageId?(ref: string): Promise<string | null>;
  /** Create a bridge network when it does not exist. */
  ensureNetwork(name: string): Promise<void>;
  /** Networks carrying every given label (`key=value` or `key`; none: every network), with their IPAM subnets. */
  networks(filter: { labels: string[] }): Promise<EngineNetwork[]>;
  /** Remove a network; already gone is fine. */
  removeNetwork(id: string): Promise<void>;
  /** Volumes carrying every given label (`key=value` or `key`). */
  volumes(filter: { labels: string[] }): Promise<Array<{ name: string; labels: Record<string, string> }>>;
  /** Remove a volume; already gone is fine. */
  removeVolume(name: string): Promise<void>;
  /** Remove a container, stopped or not (`force` kills a running one); `volumes` also removes its anonymous volumes. */
  removeContainer(id: string, o?: { force?: boolean; volumes?: boolean }): Promise<void>;
  /**
   * Stop a container (`POST /containers/{id}/stop`): the engine sends the stop signal and kills it after `timeoutS`
   * (the container's own StopTimeout when omitted). Already stopped is fine.
   */
  stop(id: string, timeoutS?: number): Promise<void>;
  /** Start a stopped container (`POST /containers/{id}/start`). Already running is fine. */
  start(id: string): Promise<void>;
  /** Run a command in a running container: stdout streams out (demultiplexed), stdin streams in when given. */
  exec(id: string, o: ExecOptions): Promise<ExecProcess>;
  /** A tar stream of a path of a container (`GET /containers/{id}/archive`); no tools needed in the image. */
  getArchive(id: string, path: string, signal?: AbortSignal): Promise<ReadableStream<Uint8Array>>;
  /** Extract a tar stream into an existing directory of a container, running or stopped (`PUT .../archive`). */
  putArchive(id: string, path: string, tar: ReadableStream<Uint8Array>, signal?: AbortSignal): Promise<void>;
}

/** The engine or compose is not usable; the message says what to do. */
export class DockerUnavailable extends Error {
  override name = "DockerUnavailable";
}

/** The engine answered with an error status; the message is the engine's own. */
export class EngineError extends Error {
  override name = "EngineError";
  constructor(
    /** HTTP status the engine answered with (404 for a missing container or image). */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The Docker layer as detected at start; `problem` says why a part is missing. */
export interface DockerHandle {
  engine: Engine | null;
  compose: ComposeDriver | null;
  problem: string | null;
}
