"""Drivers of client libraries under test, one per library, in the library's own language (java/, go/franz/,
go/sarama/, node/kafkajs/), and their launchers: each builds or installs its driver once into ktc's cache and
returns the argv that starts it (implementations/clients/README.md is the contract they answer)."""
