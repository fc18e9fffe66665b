/**
 * A MariaDB app (a locally built image) backed up through the API to an S3 server (s3rver) and to local disk: rows
 * written, backed up, the table dropped, each run restored, the rows read back. Besides the root password in the
 * environment, two services take theirs from compose secrets: root's (MARIADB_ROOT_PASSWORD_FILE, every database
 * dumped) and a user's without root (MYSQL_PASSWORD_FILE, its database dumped): the dump and the restore read them.
 */
import { describeDbRoundTrip, type ServiceExec } from "../../helpers/backups";

const ROOT_PW = "root-file-secret";
const USER_PW = "user-file-secret";
const login: Record<string, [string, string]> = {
  db: ["root", "s3cret"],
  rootfile: ["root", ROOT_PW],
  userfile: ["shop", USER_PW],
};
const sql = (exec: ServiceExec, service: string, q: string) =>
  exec(["mariadb", `-u${login[service][0]}`, "-N", "app", "-e", q], [`MYSQL_PWD=${login[service][1]}`]).then((o) => o.trim());

describeDbRoundTrip({
  strategy: "mysql",
  image: "mariadb",
  compose: (image) => `services:
  db:
    image: ${image}
    environment:
      MARIADB_ROOT_PASSWORD: s3cret
      MARIADB_DATABASE: app
    stop_grace_period: 2s
  rootfile:
    image: ${image}
    environment:
      MARIADB_ROOT_PASSWORD_FILE: /run/secrets/root_pw
      MARIADB_DATABASE: app
    secrets: [root_pw]
    stop_grace_period: 2s
  userfile:
    image: ${image}
    environment:
      MYSQL_USER: shop
      MYSQL_PASSWORD_FILE: /run/secrets/user_pw
      MYSQL_DATABASE: app
    secrets: [user_pw]
    stop_grace_period: 2s
`,
  secretFiles: { root_pw: `${ROOT_PW}\n`, user_pw: USER_PW },
  cases: [
    { service: "db", target: "s3" },
    { service: "db", target: "local" },
    { service: "rootfile", target: "local", what: "MARIADB_ROOT_PASSWORD_FILE" },
    { service: "userfile", target: "local", what: "MYSQL_PASSWORD_FILE, no root" },
  ],
  ready: (exec, service) => sql(exec, service, "select 1"),
  seed: (exec, service) =>
    sql(
      exec,
      service,
      "create table items(id int primary key, name varchar(40)); insert into items select seq, concat('item ', seq) from seq_1_to_3000",
    ),
  destroy: (exec, service) => sql(exec, service, "drop table items"),
  read: (exec, service) => sql(exec, service, "select count(*), max(name) from items"),
  expected: "3000\titem 999",
  // MariaDB 10.11.8+ begins with a sandbox-mode comment
  head: /^(\/\*M!999999\\- enable the sandbox mode \*\/\s*)?-- MariaDB dump/,
});
