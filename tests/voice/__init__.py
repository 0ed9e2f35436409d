"""Voice end to end: Wyoming STT/TTS, the Assist pipeline and the agent."""
