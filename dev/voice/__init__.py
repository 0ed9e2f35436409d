"""The voice rig's own parts: a PocketSphinx Wyoming server, the programs the
satellite runs as its microphone, wake word and speaker, and the processes of
the rig (Piper, PocketSphinx, wyoming-satellite) with the audio that goes
through them. Nothing here imports Home Assistant; the servers run from their
own venvs (`scripts/voice --install-only`)."""
