// Command kfake runs franz-go's in-memory fake Kafka broker (kfake) for ktc.
//
// It starts a one-broker kfake cluster on 127.0.0.1 (port from -port, 0 picks a
// free one), prints exactly one line "KTC_KFAKE_LISTENING <host:port>" to
// stdout once the broker accepts connections, and runs until SIGTERM or SIGINT
// arrives or its stdin reaches EOF (so it dies with the process that started it
// with a pipe on stdin), then closes the cluster.
//
// kfake's defaults are kept where they already match a plain Kafka broker: no
// topic is auto-created (kfake.AllowAutoTopicCreation is not passed) and no
// topic is seeded; CreateTopics stores whatever configs it is given.
// -config key=value (repeatable) sets broker configs (kfake.BrokerConfigs).
//
// -data-dir DIR keeps the cluster's state in DIR (kfake.DataDir): segments and
// topics are written there as they change, and a broker started again on DIR
// (after a SIGKILL, with no clean shutdown) loads them back. -sync-writes adds
// an fsync per batch (kfake.SyncWrites), which only a machine crash needs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kfake"
)

// brokerConfigs collects repeated -config key=value flags.
type brokerConfigs map[string]string

func (c brokerConfigs) String() string { return fmt.Sprint(map[string]string(c)) }

func (c brokerConfigs) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("expected key=value, got %q", s)
	}
	c[k] = v
	return nil
}

func main() {
	port := flag.Int("port", 0, "port to listen on at 127.0.0.1 (0: any free port)")
	partitions := flag.Int("default-partitions", 1, "partitions of a CreateTopics that asks for -1")
	dataDir := flag.String("data-dir", "", "directory kfake persists its state to and loads it from (empty: memory only)")
	syncWrites := flag.Bool("sync-writes", false, "fsync every batch written to -data-dir")
	cfgs := brokerConfigs{}
	flag.Var(cfgs, "config", "broker config key=value (repeatable)")
	flag.Parse()

	opts := []kfake.Opt{
		kfake.Ports(*port), // one port: one broker (kfake.NumBrokers follows len(ports))
		kfake.DefaultNumPartitions(*partitions),
	}
	if len(cfgs) > 0 {
		opts = append(opts, kfake.BrokerConfigs(cfgs))
	}
	if *dataDir != "" {
		opts = append(opts, kfake.DataDir(*dataDir))
	}
	if *syncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	cluster, err := kfake.NewCluster(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfake: cannot start: %v\n", err)
		os.Exit(1)
	}
	defer cluster.Close()

	addrs := cluster.ListenAddrs()
	if len(addrs) != 1 {
		fmt.Fprintf(os.Stderr, "kfake: expected one listener, got %v\n", addrs)
		os.Exit(1)
	}
	fmt.Printf("KTC_KFAKE_LISTENING %s\n", addrs[0])
	os.Stdout.Sync()

	reason := waitForStop()
	fmt.Fprintf(os.Stderr, "kfake: stopping (%s)\n", reason)
}

// waitForStop blocks until SIGTERM, SIGINT or EOF on stdin and says which.
func waitForStop() string {
	stop := make(chan string, 2)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { stop <- (<-sigs).String() }()
	go func() {
		io.Copy(io.Discard, os.Stdin) // returns at EOF (or on a read error)
		stop <- "stdin closed"
	}()
	return <-stop
}
