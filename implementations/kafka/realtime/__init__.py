"""Retention and rolling over real time, on a broker ktc did not start (``--real-time BUDGET``): the adapter
side.  It only observes (session.py); the judging side (ktc/judge/realtime.py) compares what it saw with the
model."""
