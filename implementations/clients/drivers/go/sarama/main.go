// ktc's driver for Sarama (github.com/IBM/sarama; github.com/Shopify/sarama before v1.40.0, the launcher rewrites
// the import path): JSON lines on stdin, one JSON answer per line on stdout (implementations/clients/README.md).
// It uses Sarama's SyncProducer, Consumer, Client and ClusterAdmin as an application would and judges nothing;
// every error the library returns is answered as ok:false. It uses only library API that Sarama 1.20 already had.
//
// Sarama hands the application a time.Time. Its zero value is Sarama's "no timestamp" (it decodes a negative
// timestamp as the zero time): the driver reports it as "-1"; every other time as its Unix milliseconds.
package main

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	sarama "github.com/IBM/sarama"
)

type record struct {
	Key       *string `json:"key"`
	Value     *string `json:"value"`
	Timestamp *string `json:"timestamp"`
}

type request struct {
	Op          string            `json:"op"`
	Bootstrap   string            `json:"bootstrap"`
	Topic       string            `json:"topic"`
	Partition   string            `json:"partition"`
	Compression string            `json:"compression"`
	Records     []record          `json:"records"`
	TimeoutMs   int               `json:"timeout_ms"`
	Offset      string            `json:"offset"`
	Count       int               `json:"count"`
	Timestamp   string            `json:"timestamp"`
	Partitions  int32             `json:"partitions"`
	Configs     map[string]string `json:"configs"`
}

type answer map[string]interface{}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<30)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		if len(in.Bytes()) == 0 {
			continue
		}
		var req request
		var ans answer
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			ans = failure(err, nil)
		} else {
			ans = handle(req)
		}
		if err := out.Encode(ans); err != nil {
			fmt.Fprintln(os.Stderr, "cannot write an answer:", err)
			os.Exit(1)
		}
	}
}

func handle(req request) answer {
	if req.TimeoutMs <= 0 {
		req.TimeoutMs = 15000
	}
	switch req.Op {
	case "hello":
		return answer{"ok": true, "library": "sarama", "version": moduleVersion(), "language": "go"}
	case "produce":
		return produce(req)
	case "consume":
		return consume(req)
	case "offsets_for_times":
		return offsetsForTimes(req)
	case "create_topic":
		return createTopic(req)
	}
	return localError("unknown op " + req.Op)
}

func moduleVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if strings.HasSuffix(dep.Path, "/sarama") {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func config(req request) *sarama.Config {
	cfg := sarama.NewConfig()
	cfg.ClientID = "ktc-driver"
	cfg.Version = sarama.V2_1_0_0 // record batches (v2) and zstd
	timeout := time.Duration(req.TimeoutMs) * time.Millisecond
	cfg.Net.DialTimeout, cfg.Net.ReadTimeout, cfg.Net.WriteTimeout = timeout, timeout, timeout
	cfg.Metadata.Retry.Max = 3
	return cfg
}

var codecs = map[string]sarama.CompressionCodec{
	"": sarama.CompressionNone, "none": sarama.CompressionNone, "gzip": sarama.CompressionGZIP,
	"snappy": sarama.CompressionSnappy, "lz4": sarama.CompressionLZ4, "zstd": sarama.CompressionZSTD,
}

func produce(req request) answer {
	codec, known := codecs[req.Compression]
	if !known {
		return localError("unknown compression " + req.Compression)
	}
	cfg := config(req)
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Partitioner = sarama.NewManualPartitioner
	cfg.Producer.Compression = codec
	cfg.Producer.Flush.Messages = len(req.Records) // every record waits for the last: one batch
	cfg.Producer.Flush.Frequency = time.Duration(req.TimeoutMs) * time.Millisecond
	cfg.Producer.Timeout = time.Duration(req.TimeoutMs) * time.Millisecond
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	messages := make([]*sarama.ProducerMessage, len(req.Records))
	for i, r := range req.Records {
		msg := &sarama.ProducerMessage{Topic: req.Topic, Partition: int32(partition), Key: bytesOf(r.Key),
			Value: bytesOf(r.Value)}
		if r.Timestamp != nil { // no timestamp: the zero time, which Sarama replaces with its now
			ms, err := strconv.ParseInt(*r.Timestamp, 10, 64)
			if err != nil {
				return failure(err, &i)
			}
			msg.Timestamp = time.UnixMilli(ms) // whole int64 range: no Duration overflow
		}
		messages[i] = msg
	}
	producer, err := sarama.NewSyncProducer([]string{req.Bootstrap}, cfg)
	if err != nil {
		return failure(err, nil)
	}
	defer producer.Close()
	sent := time.Now().UnixMilli()
	err = producer.SendMessages(messages)
	acked := time.Now().UnixMilli()
	if err != nil {
		return producerFailure(err, messages)
	}
	offsets, stamps := make([]string, len(messages)), make([]interface{}, len(messages))
	for i, msg := range messages {
		offsets[i] = strconv.FormatInt(msg.Offset, 10)
		if !msg.Timestamp.IsZero() {
			stamps[i] = millis(msg.Timestamp)
		}
	}
	return answer{"ok": true, "offsets": offsets, "timestamps": stamps,
		"sent_ms": strconv.FormatInt(sent, 10), "acked_ms": strconv.FormatInt(acked, 10)}
}

// producerFailure reports the first failed message's error, naming it when only some messages failed.
func producerFailure(err error, messages []*sarama.ProducerMessage) answer {
	var perMessage sarama.ProducerErrors
	if !errors.As(err, &perMessage) || len(perMessage) == 0 {
		return failure(err, nil)
	}
	first := perMessage[0]
	for i, msg := range messages {
		if msg == first.Msg && len(perMessage) < len(messages) {
			return failure(first.Err, &i)
		}
	}
	return failure(first.Err, nil)
}

func consume(req request) answer {
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	offset, _ := strconv.ParseInt(req.Offset, 10, 64)
	cfg := config(req)
	cfg.Consumer.Return.Errors = true
	consumer, err := sarama.NewConsumer([]string{req.Bootstrap}, cfg)
	if err != nil {
		return failure(err, nil)
	}
	defer consumer.Close()
	pc, err := consumer.ConsumePartition(req.Topic, int32(partition), offset)
	if err != nil {
		return failure(err, nil)
	}
	defer pc.Close()
	deadline := time.After(time.Duration(req.TimeoutMs) * time.Millisecond)
	rows := []answer{}
	for len(rows) < req.Count {
		select {
		case msg := <-pc.Messages():
			rows = append(rows, answer{"offset": strconv.FormatInt(msg.Offset, 10), "timestamp": millis(msg.Timestamp),
				"timestamp_type": nil, "key": encode(msg.Key), "value": encode(msg.Value)})
		case consumerErr := <-pc.Errors():
			return failure(consumerErr.Err, nil)
		case <-deadline:
			return answer{"ok": true, "records": rows}
		}
	}
	return answer{"ok": true, "records": rows}
}

func offsetsForTimes(req request) answer {
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	ms, err := strconv.ParseInt(req.Timestamp, 10, 64)
	if err != nil {
		return failure(err, nil)
	}
	client, err := sarama.NewClient([]string{req.Bootstrap}, config(req))
	if err != nil {
		return failure(err, nil)
	}
	defer client.Close()
	offset, err := client.GetOffset(req.Topic, int32(partition), ms)
	if err != nil {
		return failure(err, nil)
	}
	return answer{"ok": true, "found": true, "offset": strconv.FormatInt(offset, 10), "timestamp": nil}
}

func createTopic(req request) answer {
	admin, err := sarama.NewClusterAdmin([]string{req.Bootstrap}, config(req))
	if err != nil {
		return failure(err, nil)
	}
	defer admin.Close()
	entries := map[string]*string{}
	for k, v := range req.Configs {
		v := v
		entries[k] = &v
	}
	if req.Partitions <= 0 {
		req.Partitions = 1
	}
	detail := &sarama.TopicDetail{NumPartitions: req.Partitions, ReplicationFactor: 1, ConfigEntries: entries}
	if err := admin.CreateTopic(req.Topic, detail, false); err != nil {
		return failure(err, nil)
	}
	return answer{"ok": true}
}

// millis is what the application holds, in ms since the epoch; the zero time (Sarama's "none") is -1.
func millis(t time.Time) string {
	if t.IsZero() {
		return "-1"
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

func bytesOf(b64 *string) sarama.Encoder {
	if b64 == nil {
		return nil
	}
	data, _ := base64.StdEncoding.DecodeString(*b64)
	if data == nil {
		data = []byte{}
	}
	return sarama.ByteEncoder(data)
}

func encode(data []byte) interface{} {
	if data == nil {
		return nil
	}
	return base64.StdEncoding.EncodeToString(data)
}

func localError(message string) answer {
	return answer{"ok": false, "error": answer{"kind": "local", "code": nil, "retriable": nil, "message": message,
		"record": nil}}
}

func failure(err error, record *int) answer {
	kind, code := "local", interface{}(nil)
	var kafkaErr sarama.KError
	if errors.As(err, &kafkaErr) {
		kind, code = "broker", int16(kafkaErr)
	}
	if kafkaErr == sarama.ErrRequestTimedOut || strings.Contains(err.Error(), "timeout") {
		kind = "timeout"
	}
	var index interface{}
	if record != nil {
		index = *record
	}
	return answer{"ok": false, "error": answer{"kind": kind, "code": code, "retriable": nil,
		"message": err.Error(), "record": index}}
}
