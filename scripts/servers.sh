# Sourced by scripts/test.sh and bench/*.sh: makes sure MariaDB and PostgreSQL run on this
# machine (installing and starting them on a fresh Debian machine), and that the
# fairbench_test accounts exist. Uses running servers as they are.

FB_TEST_USER=fairbench_test
FB_TEST_PASSWORD=fairbench_test

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  if [ -z "${FB_APT_UPDATED:-}" ]; then as_root apt-get update -qq; FB_APT_UPDATED=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for() { # wait_for SECONDS CMD...
  local n=$1; shift
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 1; done
  "$@"
}

mariadb_up() { mariadb-admin --protocol=tcp -h127.0.0.1 -P3306 -uroot ping >/dev/null 2>&1; }

ensure_mariadb() {
  if ! command -v mariadb-admin >/dev/null 2>&1 || [ ! -x /usr/sbin/mariadbd ]; then
    echo "== installing MariaDB"
    apt_install mariadb-server mariadb-client
  fi
  if ! mariadb_up; then
    echo "== starting MariaDB"
    [ -d /var/lib/mysql/mysql ] || as_root mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
    as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld
    as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql
    wait_for 60 mariadb_up || { echo "MariaDB did not start" >&2; return 1; }
  fi
  # As the OS root over the socket (unix_socket or empty-password root both work).
  local sql="CREATE USER IF NOT EXISTS '$FB_TEST_USER'@'127.0.0.1' IDENTIFIED BY '$FB_TEST_PASSWORD';
    CREATE USER IF NOT EXISTS '$FB_TEST_USER'@'localhost' IDENTIFIED BY '$FB_TEST_PASSWORD';
    GRANT ALL PRIVILEGES ON *.* TO '$FB_TEST_USER'@'127.0.0.1' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO '$FB_TEST_USER'@'localhost' WITH GRANT OPTION;"
  as_root mariadb -uroot -e "$sql" 2>/dev/null || mariadb --protocol=tcp -h127.0.0.1 -uroot -e "$sql"
}

postgres_up() { pg_isready -h 127.0.0.1 -p 5432 -q >/dev/null 2>&1; }

ensure_postgres() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "== installing PostgreSQL"
    apt_install postgresql
  fi
  if ! postgres_up; then
    echo "== starting PostgreSQL"
    local v
    v=$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$v" ]; then
      v=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
      as_root pg_createcluster "$v" main >/dev/null
    fi
    # pg_ctlcluster can report failure while the server comes up fine: readiness decides.
    as_root pg_ctlcluster --skip-systemctl-redirect "$v" main start || true
    wait_for 60 postgres_up || { echo "PostgreSQL did not start" >&2; return 1; }
  fi
  as_root runuser -u postgres -- psql -qX -v ON_ERROR_STOP=1 -d postgres -c "DO \$\$BEGIN
      IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$FB_TEST_USER') THEN
        CREATE ROLE $FB_TEST_USER LOGIN SUPERUSER PASSWORD '$FB_TEST_PASSWORD';
      END IF; END\$\$;" >/dev/null
}

ensure_sysbench() {
  command -v sysbench >/dev/null 2>&1 || { echo "== installing sysbench"; apt_install sysbench; }
}

export_test_targets() {
  export FAIRBENCH_TEST_MYSQL="mysql://$FB_TEST_USER:$FB_TEST_PASSWORD@127.0.0.1:3306"
  export FAIRBENCH_TEST_POSTGRES="postgres://$FB_TEST_USER:$FB_TEST_PASSWORD@127.0.0.1:5432"
}
