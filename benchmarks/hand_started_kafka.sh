#!/bin/sh
# Start an Apache Kafka release by hand, as a user would, outside ktc: the release's jars from Maven Central and
# the classes its own scripts call (kafka-storage.sh: kafka.tools.StorageTool; kafka-server-start.sh: kafka.Kafka).
# Every broker config is Kafka's default but the KRaft listener and controller lines, and what EXTRA adds.
#
#   benchmarks/hand_started_kafka.sh VERSION PORT DIR [EXTRA_PROPERTIES_LINE ...]
#   benchmarks/hand_started_kafka.sh 4.4.0 19092 /tmp/kafka-4.4.0                      # default: checks every 5 min
#   benchmarks/hand_started_kafka.sh 3.9.2 19093 /tmp/kafka-3.9.2 log.retention.check.interval.ms=1000
#   .venv/bin/ktc run --impl kafka --kafka-bootstrap 127.0.0.1:19092 --real-time 12m
#
# The jars: $KAFKA_LIB if set, else ktc's cache of them (resolved with Maven from Maven Central on first use;
# the tarball's libs/ folder serves as well).  The broker runs in the background; its pid is DIR/broker.pid,
# its output DIR/console.log.  Stop it with: kill "$(cat DIR/broker.pid)".
set -eu
VERSION=$1 PORT=$2 DIR=$3
shift 3
CONTROLLER_PORT=$((PORT + 1))
LIB=${KAFKA_LIB:-$(python3 -c "from ktc.kafka.processes.provision import lib_dir; print(lib_dir('$VERSION'))" 2>/dev/null \
  || .venv/bin/python -c "from ktc.kafka.processes.provision import lib_dir; print(lib_dir('$VERSION'))")}
mkdir -p "$DIR/data"
cat > "$DIR/server.properties" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DIR/data
PROPERTIES
for line in "$@"; do echo "$line" >> "$DIR/server.properties"; done
java_() { java -Xmx512m -cp "$LIB/*" "$@"; }
CLUSTER_ID=$(java_ kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n 1)
java_ kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$DIR/server.properties" > "$DIR/format.log" 2>&1
nohup java -Xmx512m -cp "$LIB/*" kafka.Kafka "$DIR/server.properties" > "$DIR/console.log" 2>&1 &
echo $! > "$DIR/broker.pid"
i=0
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null; do
  i=$((i + 1))
  if [ $i -gt 600 ] || ! kill -0 "$(cat "$DIR/broker.pid")" 2>/dev/null; then
    echo "Kafka $VERSION did not start; see $DIR/console.log" >&2
    exit 1
  fi
  sleep 0.5
done
echo "Kafka $VERSION listening on 127.0.0.1:$PORT (pid $(cat "$DIR/broker.pid"))"
