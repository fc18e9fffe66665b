/**
 * A SQLite app backed up through the API to an S3 server (s3rver) and to local disk: rows written, a consistent copy
 * made by SQLite's backup, the rows deleted, each run restored (the service stopped, the file written over the
 * database, the service started), the rows read back. The image carries the backup labels (strategy and database
 * path): the compose checks refuse `sundeck.backup.*` labels in the compose file today.
 */
import { describeDbRoundTrip, type ServiceExec } from "../../helpers/backups";

const q = (exec: ServiceExec, sql: string) => exec(["sqlite3", "/data/app.db", sql]).then((o) => o.trim());

describeDbRoundTrip({
  strategy: "sqlite",
  image: "sqlite",
  compose: (image) => `services:
  app:
    image: ${image}
    labels:
      sundeck.backup.strategy: sqlite
      sundeck.backup.path: /data/app.db
    volumes:
      - data:/data
    stop_grace_period: 1s
volumes:
  data: {}
`,
  cases: [
    { service: "app", target: "s3" },
    { service: "app", target: "local" },
  ],
  ready: (exec) => q(exec, "select 1"),
  seed: (exec) =>
    q(
      exec,
      "pragma journal_mode=wal; create table t(id integer primary key, v text); with recursive n(i) as (select 1 union all select i+1 from n where i < 2000) insert into t select i, 'row ' || i from n;",
    ),
  destroy: (exec) => q(exec, "delete from t"),
  read: (exec) => q(exec, "select count(*), max(v) from t"),
  expected: "2000|row 999",
  head: /^SQLite format 3\0/,
});
