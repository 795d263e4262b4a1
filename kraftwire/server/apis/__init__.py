"""The KRaft node's API handlers: decode a request, call the pure layer through a runtime, encode the answer; one
module per API family."""
