"""The container tier's machinery: a Docker engine (the user's, or a ``dockerd`` ktc starts for
the run: engine.py), a Kafka image built without a registry (image.py), the broker in a container
(broker.py) and what ``ktc clean --containers`` removes after a killed run (clean.py).
"""
