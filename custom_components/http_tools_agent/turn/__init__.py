"""One user turn: its state and requests, one reply (streamed or not), which
calls run, what became of them, and what the agent says itself."""
