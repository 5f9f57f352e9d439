package kfake

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// TestProduceRecomputesBatchMaxTimestamp: a broker recomputes a batch's
// MaxTimestamp from its records (LogValidator sets it on every append), so a
// header that claims less than its records carry does not leak into
// ListOffsets. Here the records are at 10, 20 and 30 and the header says 10.
func TestProduceRecomputesBatchMaxTimestamp(t *testing.T) {
	t.Parallel()
	const topic = "header-max-timestamp"
	c := newCluster(t, NumBrokers(1), SeedTopics(1, topic))
	v := kversion.Stable()
	v.SetMaxKeyVersion(0, 11) // Produce v11 names the topic
	cl := newPlainClient(t, c, kgo.MaxVersions(v))

	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(timestampBatch([]int64{10, 20, 30})); err != nil {
		t.Fatal(err)
	}
	rb.MaxTimestamp = 10
	if p := produceRawV11(t, cl, topic, sealBatch(rb.AppendTo(nil))); p.ErrorCode != 0 {
		t.Fatalf("produce: %v", kerr.ErrorForCode(p.ErrorCode))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	listOffset := func(ts int64) (offset, timestamp int64) {
		t.Helper()
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = ts
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		p := resp.Topics[0].Partitions[0]
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
			t.Fatal(err)
		}
		return p.Offset, p.Timestamp
	}

	if offset, timestamp := listOffset(-3); offset != 2 || timestamp != 30 {
		t.Errorf("MAX_TIMESTAMP: got offset %d timestamp %d, want offset 2 timestamp 30", offset, timestamp)
	}
	if offset, timestamp := listOffset(15); offset != 1 || timestamp != 20 {
		t.Errorf("timestamp 15: got offset %d timestamp %d, want offset 1 timestamp 20", offset, timestamp)
	}
}
