"""ktc's Kafka toolkit: what ktc itself and every broker adapter use to talk to, start and recognise a broker.

  client/      the wire client: records, requests as data, connections, security (TLS, SASL)
  processes/   what ktc starts and always stops: Maven provisioning, the local broker, the cluster,
               tmpfs scratch, the broker clock ktc sets
  discovery.py which Kafka a broker is: Metadata, broker configs, ApiVersions -> a profile
  topics.py    the names of ktc's own topics (``ktc clean`` tells them apart) and their configs

Nothing here knows histories' judging or any implementation under test (implementations/ uses this
layer, never the other way round: the layers contract of pyproject.toml).
"""
