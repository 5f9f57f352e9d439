"""Leader changes on a cluster ktc did not start (``--impl kafka --kafka-bootstrap HOST:PORT --move-leaders``).

ktc moves the leadership of its own topics only (names of ktc/kafka/topics.py's form, created by the history):
AlterPartitionReassignments puts the elected broker first in the partition's replica list (a reorder: no data
moves), ElectLeaders PREFERRED makes it the leader (admin.py).  The brokers' clocks are what they are: each
node's offset from ktc's clock is measured from the LogAppendTime echoes, a window per node (clocks.py), and a
history is judged at both ends of those windows, as every operation on a broker ktc did not start is judged over
[sent, received] (run.py).  Before the first history, one survey (survey.py) says whether leadership can move
here: a single broker, a broker without the two requests, or a principal without ALTER on CLUSTER leaves the
leader-change clauses unsupported, with that line.
"""
