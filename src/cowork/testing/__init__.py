"""Test doubles and helpers shared by every package's tests and the benchmarks.

- `cowork.testing.mockllm`: the scripted mock LLM server (the only stand-in for a real provider).
- `cowork.testing.server`: a real Cowork server process on a free port, with its own `COWORK_HOME`.
- `cowork.testing.client`: a WebSocket client that collects session events.
- `cowork.testing.core`: in-process cores against the mock LLM, recording every session's events.
- `cowork.testing.transcripts`: whole-transcript assertions (`transcript`) and typed `payloads`.
- `cowork.testing.gates`: a `Gate` a scripted model step waits at until the test opens it.
- `cowork.testing.files`: a path's permission bits (`mode`) and a block run under a given `umask`.
- `cowork.testing.dbus`: a private D-Bus session bus and a real dunst on an X display (desktop notifications).
- `cowork.testing.xdisplay`: an Xvfb display and windows on it (activity capture).
"""
