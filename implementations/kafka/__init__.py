"""Real Apache Kafka brokers under test (issue 4): provisioning, a local KRaft broker, a wire client."""
