#!/usr/bin/env bash
# A KRaft cluster of Apache Kafka started by hand, as a user would, from a release's jars: no ktc code starts it.
#
#   examples/kraft-cluster.sh [-n NODES] [-l LIB] [-p BASE_PORT] -- COMMAND [ARG...]
#
# Each node is a combined broker+controller with the release's default broker configs; only the listeners, the
# controller quorum (its voters and timeouts) and the log directory are set.  Per node, what the release's
# scripts run:
#
#   java -cp "LIB/*" kafka.tools.StorageTool format -t CLUSTER_ID -c server.properties
#   java -cp "LIB/*" kafka.Kafka server.properties
#
# Once every node says "Kafka Server started", COMMAND runs with KAFKA_BOOTSTRAP_SERVERS set to the first node;
# its exit code is the script's.  The JVMs and their directory are removed however the script ends (COMMAND done,
# a failed start, Ctrl-C, SIGTERM).  Without COMMAND it waits until interrupted.
#
#   examples/kraft-cluster.sh -n 3 -- ktc run --impl kafka --kafka-bootstrap 127.0.0.1:19092 --move-leaders
#
# LIB: a release's libs/ folder, or ktc's cache of a Maven Central release (default: ~/.cache/ktc/kafka/4.4.0/lib,
# filled by `./run setup`).  Java 17+.  KRAFT_JAVA_OPTS: each JVM's options (default a 512 MB heap, C1 only, serial
# GC: quicker to start on a small machine); KRAFT_WAIT_S (default 180) bounds the wait for the nodes to start;
# KRAFT_KEEP=1 keeps their directory (configs, logs) after the JVMs are gone.
set -euo pipefail

nodes=3
lib="${KTC_CACHE:-$HOME/.cache/ktc}/kafka/4.4.0/lib"
base=19092
while getopts "n:l:p:" flag; do
  case "$flag" in
    n) nodes="$OPTARG" ;;
    l) lib="$OPTARG" ;;
    p) base="$OPTARG" ;;
    *) echo "usage: $0 [-n NODES] [-l LIB] [-p BASE_PORT] -- COMMAND [ARG...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if ! ls "$lib"/kafka_*.jar >/dev/null 2>&1; then
  echo "kraft-cluster: no Kafka jars in $lib (give a release's libs/ with -l)" >&2
  exit 2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/kraft-cluster.XXXXXX")"
pids=()
command_pid=""
cleanup() {
  trap - EXIT INT TERM
  set +e
  [ -n "$command_pid" ] && pids=("$command_pid" "${pids[@]}")
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.2
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done # gone, their ports closed, before the script ends
  [ -n "${KRAFT_KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# setpriv (util-linux) ends a JVM when this script dies, even by SIGKILL, where it is available
pdeath=()
command -v setpriv >/dev/null 2>&1 && pdeath=(setpriv --pdeathsig KILL --)
# KRAFT_JAVA_OPTS: JVM options (not broker configs); the default starts faster on a small machine
read -r -a java_opts <<<"${KRAFT_JAVA_OPTS:--Xmx512m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC}"
# always run in a subshell (&, $(...)): exec makes the JVM the very process the script waits for and signals
java_cmd() { exec "${pdeath[@]}" java "${java_opts[@]}" -cp "$lib/*" "$@"; }

voters=""
for i in $(seq "$nodes"); do voters="${voters:+$voters,}$i@127.0.0.1:$((base + 100 + i))"; done
for i in $(seq "$nodes"); do
  mkdir -p "$work/node$i"
  cat >"$work/node$i/server.properties" <<EOF
process.roles=broker,controller
node.id=$i
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$((base + i - 1)),CONTROLLER://127.0.0.1:$((base + 100 + i))
advertised.listeners=PLAINTEXT://127.0.0.1:$((base + i - 1))
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$work/node$i/data
# the quorum timeouts, 5x the defaults: a loaded machine (CI, 2 cores) answers a vote late, and the
# controllers then keep electing instead of starting
controller.quorum.request.timeout.ms=10000
controller.quorum.fetch.timeout.ms=10000
controller.quorum.election.timeout.ms=5000
EOF
  # logging only (not a broker config): INFO to the node's own file, as the release's config/log4j2.yaml does
  cat >"$work/node$i/log4j2.properties" <<EOF
appender.file.type=File
appender.file.name=file
appender.file.fileName=$work/node$i/server.log
appender.file.layout.type=PatternLayout
appender.file.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=INFO
rootLogger.appenderRef.file.ref=file
EOF
done

cluster_id="$(java_cmd kafka.tools.StorageTool random-uuid)"
for i in $(seq "$nodes"); do
  java_cmd kafka.tools.StorageTool format -t "$cluster_id" -c "$work/node$i/server.properties" >"$work/node$i/format.out" 2>&1 &
  pids+=("$!")
done
for pid in "${pids[@]}"; do
  wait "$pid" || { echo "kraft-cluster: StorageTool format failed:" >&2; cat "$work"/node*/format.out >&2; exit 1; }
done
pids=()

for i in $(seq "$nodes"); do
  java_cmd "-Dlog4j2.configurationFile=$work/node$i/log4j2.properties" kafka.Kafka "$work/node$i/server.properties" \
    >"$work/node$i/stdout" 2>&1 &
  pids+=("$!")
done

deadline=$((SECONDS + ${KRAFT_WAIT_S:-180}))
for i in $(seq "$nodes"); do
  until grep -q "Kafka Server started" "$work/node$i/server.log" 2>/dev/null; do
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null || [ "$SECONDS" -gt "$deadline" ]; then
      echo "kraft-cluster: node $i did not start; the end of its log:" >&2
      tail -n 20 "$work/node$i/server.log" "$work/node$i/stdout" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.2
  done
done
export KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:$base"
echo "kraft-cluster: $nodes nodes of $(basename "$lib"/kafka_*.jar .jar) up in ${SECONDS} s at $KAFKA_BOOTSTRAP_SERVERS ($work)" >&2

# COMMAND runs as a child the script waits for, so a signal to the script ends the wait at once (bash runs a trap
# only between commands); the cleanup then sends COMMAND a SIGTERM before stopping the nodes.
[ "$#" -eq 0 ] && set -- sleep infinity
"$@" &
command_pid=$!
set +e
wait "$command_pid"
code=$?
command_pid=""
exit "$code"
