"""One file per implementation family, each holding its ``PLUGIN`` (implementations/__init__.py finds them) and
the declarations of its targets (a broker's: implementations/kafka/target.py's ``BrokerTarget``)."""
