"""Mercyless server: FastAPI app, WebSocket sessions, Redis-backed rooms, timers and bots."""
