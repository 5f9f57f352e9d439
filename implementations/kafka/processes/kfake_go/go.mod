// ktc's launcher for franz-go's fake Kafka broker (see main.go). kfake has no
// tagged releases: the pseudo-version below carries the commit time of franz-go v1.22.0,
// whose kversion API it needs (kfake's own go.mod still says v1.21.7, which
// does not compile it), so franz-go is pinned to v1.22.0 as well.
module github.com/ktc/tools/kfake

go 1.26.0

require github.com/twmb/franz-go/pkg/kfake v0.0.0-20260918054303-01f206a7e32c

require (
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.30 // indirect
	github.com/twmb/franz-go v1.22.0 // indirect
	github.com/twmb/franz-go/pkg/kmsg v1.14.0 // indirect
)
