"""The active controller's decisions, one module per control manager: request + image -> records + response.

Pure like the Raft core: no I/O, no clocks (time is passed in), no randomness except through a passed-in source.
The asyncio edge appends the records, replays them into the image when they commit, then sends the response.
"""
