// ktc's driver for franz-go (github.com/twmb/franz-go): JSON lines on stdin, one JSON answer per line on stdout
// (implementations/clients/README.md). It uses kgo and kadm as an application would and judges nothing; every
// error the library returns is answered as ok:false.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
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

type answer map[string]any

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
		return answer{"ok": true, "library": "franz-go", "version": moduleVersion(), "language": "go"}
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
			if dep.Path == "github.com/twmb/franz-go" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

var codecs = map[string]kgo.CompressionCodec{
	"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
	"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
}

func produce(req request) answer {
	codec, known := codecs[req.Compression]
	if !known && req.Compression != "" {
		return localError("unknown compression " + req.Compression)
	}
	if !known {
		codec = kgo.NoCompression()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(req.Bootstrap), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(time.Minute),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(16<<20))
	// No RecordDeliveryTimeout: kgo counts it from each record's Timestamp, so a record the application dated
	// in the past would time out before it is sent. The request's context bounds the wait instead.
	if err != nil {
		return failure(err, nil)
	}
	defer cl.Close()
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	built := make([]*kgo.Record, len(req.Records))
	for i, r := range req.Records {
		rec := &kgo.Record{Topic: req.Topic, Partition: int32(partition), Key: decode(r.Key), Value: decode(r.Value)}
		if r.Timestamp != nil { // no timestamp: the zero time, which kgo replaces with its now
			ms, err := strconv.ParseInt(*r.Timestamp, 10, 64)
			if err != nil {
				return failure(err, &i)
			}
			rec.Timestamp = time.UnixMilli(ms)
		}
		built[i] = rec
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(req.TimeoutMs)*time.Millisecond)
	defer cancel()
	errs := make([]error, len(built))
	done := make(chan int, len(built))
	sent := time.Now().UnixMilli()
	for i, rec := range built {
		i := i
		cl.Produce(ctx, rec, func(_ *kgo.Record, err error) { errs[i] = err; done <- i })
	}
	if err := cl.Flush(ctx); err != nil {
		return failure(err, nil)
	}
	for range built {
		<-done
	}
	acked := time.Now().UnixMilli()
	if i := named(errs); i >= 0 {
		return failure(errs[i], recordIndex(errs, i))
	}
	offsets, stamps := make([]string, len(built)), make([]any, len(built))
	for i, rec := range built {
		offsets[i] = strconv.FormatInt(rec.Offset, 10)
		stamps[i] = strconv.FormatInt(rec.Timestamp.UnixMilli(), 10)
	}
	return answer{"ok": true, "offsets": offsets, "timestamps": stamps,
		"sent_ms": strconv.FormatInt(sent, 10), "acked_ms": strconv.FormatInt(acked, 10)}
}

// named is the first record that failed with a broker error, else the first that failed; -1 when none did.
func named(errs []error) int {
	first := -1
	for i, err := range errs {
		var kafkaErr *kerr.Error
		if err != nil && first < 0 {
			first = i
		}
		if errors.As(err, &kafkaErr) {
			return i
		}
	}
	return first
}

// recordIndex names the record only when the records' errors differ (the library told them apart).
func recordIndex(errs []error, i int) *int {
	for _, err := range errs {
		if err == nil || err.Error() != errs[i].Error() {
			return &i
		}
	}
	return nil
}

func consume(req request) answer {
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	offset, _ := strconv.ParseInt(req.Offset, 10, 64)
	cl, err := kgo.NewClient(kgo.SeedBrokers(req.Bootstrap), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{
		req.Topic: {int32(partition): kgo.NewOffset().At(offset)},
	}))
	if err != nil {
		return failure(err, nil)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(req.TimeoutMs)*time.Millisecond)
	defer cancel()
	rows := []answer{}
	for len(rows) < req.Count && ctx.Err() == nil {
		fetches := cl.PollFetches(ctx)
		for _, fe := range fetches.Errors() {
			if !errors.Is(fe.Err, context.DeadlineExceeded) {
				return failure(fe.Err, nil)
			}
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if len(rows) < req.Count {
				rows = append(rows, answer{"offset": strconv.FormatInt(r.Offset, 10),
					"timestamp": strconv.FormatInt(r.Timestamp.UnixMilli(), 10),
					"timestamp_type": timestampType(r.Attrs.TimestampType()), "key": encode(r.Key), "value": encode(r.Value)})
			}
		})
	}
	return answer{"ok": true, "records": rows}
}

func timestampType(t int8) string {
	switch t {
	case 0:
		return "CreateTime"
	case 1:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

func offsetsForTimes(req request) answer {
	partition, _ := strconv.ParseInt(req.Partition, 10, 32)
	millis, err := strconv.ParseInt(req.Timestamp, 10, 64)
	if err != nil {
		return failure(err, nil)
	}
	return withAdmin(req, func(ctx context.Context, adm *kadm.Client) answer {
		listed, err := adm.ListOffsetsAfterMilli(ctx, millis, req.Topic)
		if err != nil {
			return failure(err, nil)
		}
		hit, ok := listed.Lookup(req.Topic, int32(partition))
		if !ok {
			return answer{"ok": true, "found": false}
		}
		if hit.Err != nil {
			return failure(hit.Err, nil)
		}
		return answer{"ok": true, "found": true, "offset": strconv.FormatInt(hit.Offset, 10),
			"timestamp": strconv.FormatInt(hit.Timestamp, 10)}
	})
}

func createTopic(req request) answer {
	configs := map[string]*string{}
	for k, v := range req.Configs {
		v := v
		configs[k] = &v
	}
	if req.Partitions <= 0 {
		req.Partitions = 1
	}
	return withAdmin(req, func(ctx context.Context, adm *kadm.Client) answer {
		resp, err := adm.CreateTopics(ctx, req.Partitions, 1, configs, req.Topic)
		if err == nil {
			err = resp[req.Topic].Err
		}
		if err != nil {
			return failure(err, nil)
		}
		return answer{"ok": true}
	})
}

func withAdmin(req request, use func(context.Context, *kadm.Client) answer) answer {
	cl, err := kgo.NewClient(kgo.SeedBrokers(req.Bootstrap))
	if err != nil {
		return failure(err, nil)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(req.TimeoutMs)*time.Millisecond)
	defer cancel()
	return use(ctx, kadm.NewClient(cl))
}

func decode(b64 *string) []byte {
	if b64 == nil {
		return nil
	}
	data, _ := base64.StdEncoding.DecodeString(*b64)
	if data == nil {
		data = []byte{}
	}
	return data
}

func encode(data []byte) any {
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
	kind, code, retriable := "local", any(nil), any(nil)
	var kafkaErr *kerr.Error
	if errors.As(err, &kafkaErr) {
		kind, code, retriable = "broker", kafkaErr.Code, kafkaErr.Retriable
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrRecordTimeout) {
		kind = "timeout"
	}
	var index any
	if record != nil {
		index = *record
	}
	return answer{"ok": false, "error": answer{"kind": kind, "code": code, "retriable": retriable,
		"message": err.Error(), "record": index}}
}
