"""The language model server: the client, its errors, what the server says
it is, whether it answers, the model's profile, the warm-up, and the
turns under way on it."""
