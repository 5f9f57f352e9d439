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

// TestLogAppendTimeTopic: on a topic created with
// message.timestamp.type=LogAppendTime the broker stamps every appended
// batch with its own clock (KIP-32): the ProduceResponse carries that time,
// and a consumer reads the record at it, with the LogAppendTime type,
// whatever CreateTime the producer sent.
func TestLogAppendTimeTopic(t *testing.T) {
	t.Parallel()
	const topic = "log-append-time"
	c := newCluster(t, NumBrokers(1))
	v := kversion.Stable()
	v.SetMaxKeyVersion(0, 11) // Produce v11 names the topic
	cl := newPlainClient(t, c, kgo.MaxVersions(v))

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := kmsg.NewPtrCreateTopicsRequest()
	rt := kmsg.NewCreateTopicsRequestTopic()
	rt.Topic = topic
	rt.NumPartitions = 1
	rt.ReplicationFactor = 1
	cfg := kmsg.NewCreateTopicsRequestTopicConfig()
	cfg.Name = "message.timestamp.type"
	value := "LogAppendTime"
	cfg.Value = &value
	rt.Configs = append(rt.Configs, cfg)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].ErrorCode); err != nil {
		t.Fatal(err)
	}

	// A CreateTime batch a day old, as any producer sends it.
	rec := kvRecord()
	rec.Length = int32(len(rec.AppendTo(nil)) - 1)
	created := time.Now().Add(-24 * time.Hour).UnixMilli()
	batch := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		FirstTimestamp:       created,
		MaxTimestamp:         created,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           1,
		Records:              rec.AppendTo(nil),
	}
	before := time.Now().UnixMilli()
	p := produceRawV11(t, cl, topic, sealBatch(batch.AppendTo(nil)))
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		t.Fatal(err)
	}
	if p.LogAppendTime < before {
		t.Errorf("ProduceResponse LogAppendTime %d, want the broker's time at the append (>= %d)", p.LogAppendTime, before)
	}

	consumer := newPlainClient(t, c, kgo.ConsumeTopics(topic))
	r := consumeN(t, consumer, 1, 10*time.Second)[0]
	if r.Attrs.TimestampType() != 1 || r.Timestamp.UnixMilli() != p.LogAppendTime {
		t.Errorf("consumed timestamp %d of type %d, want the append time %d of type 1 (LogAppendTime)",
			r.Timestamp.UnixMilli(), r.Attrs.TimestampType(), p.LogAppendTime)
	}
}
