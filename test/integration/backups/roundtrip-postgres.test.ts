/**
 * A Postgres app (a locally built image) backed up through the API to an S3 server (s3rver) and to local disk: rows
 * written, backed up, the table dropped, each run restored, the rows read back; the archive downloaded (S3: through
 * the presigned URL the route redirects to) matches the recorded sha256. The second service takes its password from
 * a compose secret (POSTGRES_PASSWORD_FILE) and asks for it on the socket too: pg_dump and pg_restore must read it.
 */
import { describeDbRoundTrip, type ServiceExec } from "../../helpers/backups";

// spaces, quotes, a dollar and a backslash: read as data, never as shell text
const PASSWORD = `pg file-$ecret "q" 's' \\b`;
const passwords: Record<string, string> = { db: "s3cret", dbfile: PASSWORD };
const psql = (exec: ServiceExec, service: string, sql: string) =>
  exec(["psql", "-U", "sd", "-d", "app", "-tAc", sql], [`PGPASSWORD=${passwords[service]}`]).then((out) => out.trim());

describeDbRoundTrip({
  strategy: "postgres",
  image: "postgres",
  compose: (image) => `services:
  db:
    image: ${image}
    environment:
      POSTGRES_USER: sd
      POSTGRES_PASSWORD: s3cret
      POSTGRES_DB: app
      POSTGRES_INITDB_ARGS: --auth-local=scram-sha-256
    stop_grace_period: 2s
  dbfile:
    image: ${image}
    environment:
      POSTGRES_USER: sd
      POSTGRES_PASSWORD_FILE: /run/secrets/pg_pw
      POSTGRES_DB: app
      POSTGRES_INITDB_ARGS: --auth-local=scram-sha-256
    secrets: [pg_pw]
    stop_grace_period: 2s
`,
  secretFiles: { pg_pw: `${PASSWORD}\n` },
  cases: [
    { service: "db", target: "s3" },
    { service: "db", target: "local" },
    { service: "dbfile", target: "local", what: "POSTGRES_PASSWORD_FILE" },
  ],
  ready: (exec, service) => psql(exec, service, "select 1"),
  seed: (exec, service) =>
    psql(
      exec,
      service,
      "create table items(id int primary key, name text); insert into items select g, 'item ' || g from generate_series(1, 2000) g",
    ),
  destroy: (exec, service) => psql(exec, service, "drop table items"),
  read: (exec, service) => psql(exec, service, "select count(*), max(name) from items"),
  expected: "2000|item 999",
  head: /^PGDMP/,
});
