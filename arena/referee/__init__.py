"""The referee: gRPC servicer, bot sessions, match runner, clocks and verdicts."""
